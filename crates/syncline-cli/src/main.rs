//! `syncline`: runs syncline's cores on recordings and reports timing.
//!
//! The command-line contract (flags, CSV columns, JSON Lines output, exit
//! statuses) is fixed by the project's `INTERFACE.md`; every subcommand
//! streams its input and writes one JSON object per line.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod error;
mod input;
mod output;
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
    /// Timer precision on this machine: lateness of each periodic wake-up.
    Timer(timer::TimerArgs),
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Timer(args) => timer::run(args),
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
