//! `gangpack`: plan, explain and taint what-ifs on what `kubectl get -o yaml` prints.
//!
//! ```text
//! gangpack plan    -f PATH... [-o table|yaml|json]
//! gangpack explain -f PATH... [PODGROUP | --pod NAMESPACE/NAME]
//! gangpack taint   -f PATH... (--device DRIVER/POOL/DEVICE | --node NODE | --rule FILE)
//!                  [--effect NoExecute|NoSchedule|PreferNoSchedule|None] [--key K] [--value V]
//!                  [--after-plan] [-o table|yaml|json]
//! gangpack demo    [--manifests]
//! ```
//!
//! Global flags (before or after the command): `--policy best-fit|spread|fragmentation-aware`,
//! `--seed N`, `--color auto|always|never`, `--skip-invalid`, `--strict`, `--now RFC3339`.
//!
//! Every command loads its input the same way (`gangpack_k8s::load_paths`, then
//! `Snapshot::build`); the demo builds its objects as Kubernetes documents and loads
//! them through the same path (`load_str`).
//!
//! # Output contract
//!
//! What the commands print is documented in `cli/README.md` ("Output contract"); the
//! machine-readable forms (`-o yaml|json`) are the changed objects as a `kind: List`,
//! and the table forms are for people but stable: same input, same bytes, and no
//! colour unless stdout is a terminal (or `--color always`).
//!
//! # Exit status
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success: everything pending was placed (`plan`), or the command did what it was asked |
//! | 1 | failure: a file or stdin could not be read, output could not be written |
//! | 2 | invalid input or usage: every input problem is printed to stderr, one per line |
//! | 3 | `plan`: at least one pod or PodGroup stays pending (or is refused as invalid / failed) |

mod demo;
mod explain;
mod input;
mod plan;
mod render;
mod taint;
mod time;

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::render::Style;

/// Exit status: success.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: I/O failure (unreadable file, unwritable output).
pub(crate) const EXIT_FAILURE: u8 = 1;
/// Exit status: invalid input or usage (clap uses 2 for usage errors too).
pub(crate) const EXIT_INVALID: u8 = 2;
/// Exit status: `plan` left something pending.
pub(crate) const EXIT_PENDING: u8 = 3;

const EXIT_HELP: &str = "\
Exit status:
  0  success: everything pending was placed (plan), or the command did what it was asked
  1  failure: a file or stdin could not be read, or output could not be written
  2  invalid input or usage: every input problem is printed to stderr, one per line
  3  plan: at least one pod or PodGroup stays pending (or is refused as invalid or failed)";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "gangpack",
    version,
    about = "Gang scheduling and DRA device allocation what-ifs on Kubernetes 1.37 manifests",
    long_about = "Gang scheduling and DRA device allocation what-ifs on Kubernetes 1.37 manifests.\n\n\
                  Reads what `kubectl get -o yaml|json` prints (Nodes, ResourceSlices, DeviceClasses, \
                  DeviceTaintRules, PriorityClasses, ResourceClaims and templates, Workloads, \
                  PodGroups, Pods): bound pods and allocated claims are the running state, the rest \
                  is pending. Nothing is sent to a cluster.",
    after_help = EXIT_HELP,
    after_long_help = EXIT_HELP
)]
pub(crate) struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub(crate) struct Global {
    /// How to choose among feasible nodes and racks.
    #[arg(help_heading = "Global options", long, global = true, value_enum, default_value_t = Policy::BestFit, ignore_case = true)]
    pub(crate) policy: Policy,
    /// Seed for the demo's random choices (which GPU fails). Planning never uses
    /// randomness: ties are broken by name, so the same input gives the same output.
    #[arg(
        help_heading = "Global options",
        long,
        global = true,
        default_value_t = 0,
        value_name = "N"
    )]
    pub(crate) seed: u64,
    /// Colour: auto = only when stdout (stderr for messages) is a terminal and NO_COLOR
    /// is unset or empty.
    #[arg(help_heading = "Global options", long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
    /// Skip objects that fail validation or conversion (each reported on stderr as a
    /// warning) instead of failing. A file that cannot be parsed still fails.
    #[arg(help_heading = "Global options", long, global = true)]
    pub(crate) skip_invalid: bool,
    /// Unknown fields are errors, not warnings (as `kubectl --validate=strict`).
    #[arg(help_heading = "Global options", long, global = true)]
    pub(crate) strict: bool,
    /// The logical clock, RFC 3339 (`2026-11-05T08:00:00Z`): when new taints are added
    /// and evictions counted from. Default: the latest timestamp in the input.
    #[arg(help_heading = "Global options", long, global = true, value_name = "RFC3339", value_parser = time::parse_rfc3339_arg)]
    pub(crate) now: Option<gangpack::Time>,
}

/// `--policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Policy {
    /// The tightest nodes and smallest free rack first (kube-scheduler's MostAllocated).
    BestFit,
    /// The emptiest nodes and racks first.
    Spread,
    /// The placement that least fragments free GPUs for a typical workload mix (FGD).
    FragmentationAware,
}

impl Policy {
    /// The core's policy of that name.
    pub(crate) fn scoring(self) -> gangpack::ScoringPolicy {
        let name = match self {
            Policy::BestFit => "BestFit",
            Policy::Spread => "Spread",
            Policy::FragmentationAware => "FragmentationAware",
        };
        gangpack::ScoringPolicy::parse(name).expect("the core knows every policy name")
    }
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour on a terminal, unless NO_COLOR is set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// `-o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Aligned text for people.
    Table,
    /// The changed objects as a YAML `kind: List`.
    Yaml,
    /// The changed objects as a JSON `kind: List`.
    Json,
}

/// The input files of a command.
#[derive(Debug, Args)]
pub(crate) struct Inputs {
    /// A file or directory of manifests (`*.yaml`, `*.yml`, `*.json`, read recursively);
    /// `-` reads stdin. Repeat the flag for more, or separate paths with commas.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "PATH",
        required = true,
        value_delimiter = ','
    )]
    pub(crate) paths: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one scheduling cycle: place pending pods and PodGroups (highest priority
    /// first, each gang whole or not at all, preempting lower priorities when needed).
    #[command(after_help = EXIT_HELP)]
    Plan {
        #[command(flatten)]
        inputs: Inputs,
        /// `table`: what goes where and why not; `yaml` / `json`: the objects the
        /// scheduler would change (claim allocations, pod bindings, conditions) as a List.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Table)]
        output: Format,
    },
    /// Why a PodGroup (or a pod without one) is not placed: the facts per node, the
    /// minimal set of them blocking it, and whether waiting or preemption could help.
    #[command(after_help = EXIT_HELP)]
    Explain {
        #[command(flatten)]
        inputs: Inputs,
        /// The PodGroup, `NAMESPACE/NAME` or `NAME` (namespace `default`). Without it (and
        /// without --pod), every unit that stays pending is explained.
        #[arg(value_name = "PODGROUP", conflicts_with = "pod")]
        group: Option<String>,
        /// A pod instead of a PodGroup, `NAMESPACE/NAME` or `NAME`; a pod of a PodGroup
        /// explains its group.
        #[arg(long, value_name = "NAMESPACE/NAME")]
        pod: Option<String>,
    },
    /// What a new taint would do: who is evicted and when, which gangs break, and where
    /// the evicted gangs could go. Nothing is changed anywhere.
    #[command(after_help = EXIT_HELP)]
    Taint(taint::TaintArgs),
    /// A built-in cluster (4 racks x 8 nodes x 8 H100s, training gangs, inference pods,
    /// failing GPUs): placements, a pending gang explained, a GPU failure that evicts a
    /// gang. No arguments needed.
    #[command(after_help = EXIT_HELP)]
    Demo {
        /// Print the demo's manifests (YAML) instead of running it.
        #[arg(long)]
        manifests: bool,
    },
}

/// What a command produced: text for stdout and an exit status.
pub(crate) struct Outcome {
    pub(crate) stdout: String,
    pub(crate) code: u8,
}

/// Why a command stopped before producing its output.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Invalid input: every problem, one line each (exit 2).
    Invalid(Vec<String>),
    /// Reading or writing failed (exit 1).
    Io(String),
}

impl Failure {
    /// An invalid-input failure with one message.
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure::Invalid(vec![message.into()])
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let err_style = Style::for_stderr(cli.global.color);
    let out_style = Style::for_stdout(cli.global.color);
    let mut messages = input::Messages::new(err_style);
    let result = match &cli.command {
        Command::Plan { inputs, output } => plan::run(
            &cli.global,
            &inputs.paths,
            *output,
            out_style,
            &mut messages,
        ),
        Command::Explain { inputs, group, pod } => explain::run(
            &cli.global,
            &inputs.paths,
            group.as_deref(),
            pod.as_deref(),
            &mut messages,
        ),
        Command::Taint(args) => taint::run(&cli.global, args, out_style, &mut messages),
        Command::Demo { manifests } => demo::run(&cli.global, *manifests, out_style, &mut messages),
    };
    let code = match result {
        Ok(outcome) => match write_stdout(&outcome.stdout) {
            Ok(()) => outcome.code,
            Err(e) => {
                messages.error(&format!("cannot write output: {e}"));
                EXIT_FAILURE
            }
        },
        Err(Failure::Invalid(lines)) => {
            for l in &lines {
                messages.error(l);
            }
            EXIT_INVALID
        }
        Err(Failure::Io(message)) => {
            messages.error(&message);
            EXIT_FAILURE
        }
    };
    ExitCode::from(code)
}

/// Writes the whole output at once; a closed pipe (`gangpack plan | head`) is not an
/// error.
fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
