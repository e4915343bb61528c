#!/usr/bin/env python3
"""A camera whose frame period wanders (auto exposure): 60 s, 63.44 ms with an
Ornstein-Uhlenbeck relative deviation (--amp, time constant --tc s) and delays
(--jit exp|gauss, scale --js ns). Scores syncline, raw arrivals, causal local
lines and, with --refs, Rock and the two causal references, per seed (RMS / max, ms,
median removed, by ../shared/data/estimator/score.py).

    python3 scripts/wandering_camera.py [--bin B] [--seeds 1-6] [--refs] [--jit exp --js 500000]
"""
import json, math, random, subprocess, sys, os, argparse
ap=argparse.ArgumentParser(); ap.add_argument("--bin",default="target/release/syncline"); ap.add_argument("--seeds",default="1-6")
ap.add_argument("--amp",type=float,default=0.02); ap.add_argument("--tc",type=float,default=4.0); ap.add_argument("--jit",default="exp"); ap.add_argument("--js",type=float,default=0.5e6)
ap.add_argument("--refs",action="store_true"); ap.add_argument("--period",type=int,default=63_440_000); ap.add_argument("--noperiod",action="store_true")
a=ap.parse_args()
lo,hi=map(int,a.seeds.split("-"))
def gen(seed):
    rng=random.Random(seed); p0=a.period; t=1_700_000_000_000_000_000; w=0.0; s=[]; q=[]
    dt=p0/1e9; k=math.exp(-dt/a.tc); sd=a.amp*math.sqrt(1-k*k)
    for i in range(int(60/dt)):
        w=w*k+rng.gauss(0,sd); t+=round(p0*(1+w)); s.append(t)
        j = rng.expovariate(1/a.js) if a.jit=="exp" else abs(rng.gauss(0,a.js))
        q.append(t+5_000_000+j)
    qq=[];last=0
    for x in q: last=max(last,x); qq.append(int(last))
    return s,qq
res={}
for seed in range(lo,hi+1):
    s,q=gen(seed); d=f"/tmp/syncline_wander/{seed}"; os.makedirs(d,exist_ok=True)
    csvp=f"{d}/w.csv"; side=f"{d}/w.json"
    open(csvp,"w").write("event,time_ns,index,true_ns\n"+"".join(f"sample,{x},,{t}\n" for x,t in zip(q,s)))
    json.dump({"name":"w","window_ns":5_000_000_000,"period_ns":a.period,"loss_threshold":2},open(side,"w"))
    outs={"syncline":f"{d}/syn.jsonl","arrival":f"{d}/arr.jsonl"}
    with open(outs["syncline"],"w") as f:
        subprocess.run([a.bin,"estimate","--window-ns","5000000000"]+([] if a.noperiod else ["--period-ns",str(a.period)])+[csvp],stdout=f,check=True)
    open(outs["arrival"],"w").write("".join(json.dumps({"id":i,"estimate_ns":x})+"\n" for i,x in enumerate(q)))
    for K in (8,16):
        outs[f"local{K}"]=f"{d}/l{K}.jsonl"; rows=[]
        for i in range(len(q)):
            xs=list(range(max(0,i-K+1),i+1))
            if len(xs)<3: rows.append(q[i]); continue
            ys=[q[j]-q[xs[0]] for j in xs]; mx=sum(xs)/len(xs); my=sum(ys)/len(ys)
            b=sum((x-mx)*(y-my) for x,y in zip(xs,ys))/sum((x-mx)**2 for x in xs)
            rows.append(int(q[xs[0]]+my+b*(i-mx)))
        open(outs[f"local{K}"],"w").write("".join(json.dumps({"id":i,"estimate_ns":x})+"\n" for i,x in enumerate(rows)))
    if a.refs:
        for ref,cmd in [("Rock",["scripts/rock_estimator.py",csvp,side]),("hull",["scripts/causal_reference.py","hull",csvp,side]),("Olson",["scripts/causal_reference.py","olson",csvp,side])]:
            outs[ref]=f"{d}/{ref}.jsonl"; subprocess.run(["python3"]+cmd+[outs[ref]],check=True,capture_output=True)
    for k,v in outs.items():
        r=json.loads(subprocess.run(["python3","../shared/data/estimator/score.py",csvp,v],capture_output=True,text=True,check=True).stdout)
        res.setdefault(k,[]).append((r['rms_ns']/1e6,r['max_ns']/1e6))
for k,v in res.items():
    print(f"{k:10}", " ".join(f"{r:6.2f}/{m:5.1f}" for r,m in v))
