//! `syncline`: runs syncline's cores on recordings and reports timing.
//!
//! The command-line contract (flags, CSV columns, JSON Lines output, exit
//! statuses) is fixed by the project's `INTERFACE.md`; every subcommand
//! streams its input and writes one JSON object per line.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod align;
mod analyze;
mod associate;
mod coordinator;
mod error;
mod estimate;
mod events;
mod input;
mod output;
mod participant;
mod plot;
mod ros2;
mod sync;
mod timer;

pub use error::CliError;

/// Makes time right in robot sensor pipelines: replay syncline's cores on
/// recorded events.
#[derive(Debug, Parser)]
#[command(name = "syncline", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Associate two TUM-format timestamp lists (like TUM's associate.py).
    Associate(associate::AssociateArgs),
    /// Multi-topic synchronizers: ApproximateTime, ExactTime, LatestTime.
    Sync(sync::SyncArgs),
    /// Replay streams in timestamp order through the stream aligner.
    Align(align::AlignArgs),
    /// Timer precision on this machine: lateness of each periodic wake-up.
    Timer(timer::TimerArgs),
    /// Timestamp estimator replay: acquisition times from arrival times.
    Estimate(estimate::EstimateArgs),
    /// Timing report of a recording (MCAP or event CSV): per topic rate,
    /// jitter, gaps and presumed losses, out-of-order and duplicate stamps,
    /// latency (log_time minus header stamp).
    Analyze(analyze::AnalyzeArgs),
    /// Timing figures of a recording (PNG and SVG): inter-arrival times,
    /// latency, jitter histogram, ApproximateTime set spread.
    Plot(plot::PlotArgs),
    /// Live ROS 2 topics over rmw_zenoh, no ROS installation needed:
    /// `topics`, `hz` (timing report), `record` (MCAP).
    Ros2(ros2::Ros2Args),
    /// Print a shell completion script (bash, zsh, fish, elvish,
    /// powershell), e.g. `syncline completions bash > /etc/bash_completion.d/syncline`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Timing coordinator of participants in other processes, over zenoh.
    Coordinator(coordinator::CoordinatorArgs),
    /// A periodic timer driven by a remote coordinator, over zenoh.
    Participant(participant::ParticipantArgs),
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Associate(args) => associate::run(args),
        Command::Sync(args) => sync::run(args),
        Command::Align(args) => align::run(args),
        Command::Timer(args) => timer::run(args),
        Command::Estimate(args) => estimate::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Ros2(args) => ros2::run(args),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "syncline",
                &mut std::io::stdout(),
            );
            Ok(())
        }
        Command::Coordinator(args) => coordinator::run(args),
        Command::Participant(args) => participant::run(args),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("syncline: error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
