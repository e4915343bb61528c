#!/usr/bin/env python3
"""The live rig camera of ../shared/data/real (frame period wandering 61-65 ms)
scored against a proxy for its frame times: a centred least-squares line through
the arrivals +-K (env K, default 5). Prints syncline (with and without an expected
period), raw arrivals, Rock and the two causal references (RMS / max, ms).

    python3 scripts/wandering_live_rig.py [BIN]
"""
import json, subprocess, sys, os
K = int(os.environ.get("K", "5"))
BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/syncline"
ts=[int(l.split(',')[0]) for l in open('../shared/data/real/vislam_live_2025/cam0/data.csv') if l[0].isdigit()]
n=len(ts)
def local(i):
    lo,hi=max(0,i-K),min(n,i+K+1)
    xs=list(range(lo,hi)); ys=[ts[j]-ts[lo] for j in xs]
    mx=sum(xs)/len(xs); my=sum(ys)/len(ys)
    sxx=sum((x-mx)**2 for x in xs); sxy=sum((x-mx)*(y-my) for x,y in zip(xs,ys))
    return int(ts[lo]+my+sxy/sxx*(i-mx))
truth=[local(i) for i in range(n)]
d="/tmp/syncline_live"; os.makedirs(d, exist_ok=True); csvp=f"{d}/live.csv"; side=f"{d}/live.json"
open(csvp,"w").write("event,time_ns,index,true_ns\n"+"".join(f"sample,{a},,{t}\n" for a,t in zip(ts,truth)))
json.dump({"name":"live","window_ns":5_000_000_000,"period_ns":63_440_000,"loss_threshold":2},open(side,"w"))
outs={}
for name,extra in [("syncline",[]),("syncline_p",["--period-ns","63440000"])]:
    outs[name]=f"{d}/{name}.jsonl"
    with open(outs[name],"w") as f:
        subprocess.run([BIN,"estimate","--window-ns","5000000000"]+extra+[csvp],stdout=f,check=True)
outs["arrival"]=f"{d}/arr.jsonl"
open(outs["arrival"],"w").write("".join(json.dumps({"id":i,"estimate_ns":a})+"\n" for i,a in enumerate(ts)))
for ref,cmd in [("Rock",["scripts/rock_estimator.py",csvp,side]),("hull",["scripts/causal_reference.py","hull",csvp,side]),("Olson",["scripts/causal_reference.py","olson",csvp,side])]:
    outs[ref]=f"{d}/{ref}.jsonl"
    subprocess.run(["python3"]+cmd+[outs[ref]],check=True,capture_output=True)
for k,v in outs.items():
    r=json.loads(subprocess.run(["python3","../shared/data/estimator/score.py",csvp,v],capture_output=True,text=True,check=True).stdout)
    print(f"{k:12} rms {r['rms_ns']/1e6:7.3f} ms  max {r['max_ns']/1e6:7.3f} ms")
