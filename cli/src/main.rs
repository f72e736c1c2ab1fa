//! `gangpack`: plan, explain and taint what-ifs on what `kubectl get -o yaml` prints.
//!
//! ```text
//! gangpack plan    -f PATH... [-o table|yaml|json]
//! gangpack explain -f PATH... [PODGROUP | --pod NAMESPACE/NAME]
//! gangpack taint   -f PATH... (--device DRIVER/POOL/DEVICE | --node NODE | --rule FILE)
//!                  [--effect NoExecute|NoSchedule|PreferNoSchedule|None] [--key K] [--value V]
//!                  [--after-plan] [-o table|yaml|json]
//! gangpack demo    [--manifests]
//! gangpack check   -f PATH... [--decisions PATH...] [--admission] [-o table|yaml|json]
//! gangpack diff    -f PATH... --ours PATH... --theirs PATH... [-o table|yaml|json]
//! gangpack gen     [--seed N] [--size small|medium|large] [--kind gangs|pods|mixed] [-o yaml|json]
//! gangpack gen     --fleet NODES [--seed N] [-o yaml|json]
//! gangpack watch   -f STREAM... [--initial PATH...] [--quiet-ms MS] [--every N] [--audit] [-o table|json]
//! gangpack shrink  -f PATH... --judge COMMAND [-o FILE] [--max-time DURATION] [--max-runs N]
//!                  [--judge-timeout DURATION] [--fails-with CODE] [--keep-numbers]
//! ```
//!
//! Global flags (before or after the command): `--policy
//! best-fit|spread|stranding|fgd|gang-aware` (`fragmentation-aware`, deprecated, means
//! `fgd`), `--workload-mix FILE`, `--protect-key KEY`, `--lower-domain KEY|device:ATTR`,
//! `--seed N`,
//! `--color auto|always|never`, `--skip-invalid`, `--strict`, `--now RFC3339`,
//! `--step-budget N`, `--allocator-step-budget N`, `--max-input-bytes BYTES`,
//! `--max-alias-expansion N`, `-n/--namespace NS`, `-A/--all-namespaces`.
//!
//! The commands are `gangpack_cli`'s functions (the library in `src/lib.rs`, shared
//! with the WebAssembly build); this file is the clap definition and the terminal:
//! colour, stderr lines and the exit status. Every command loads its input the same
//! way (`gangpack_k8s::load_paths`, then `Snapshot::build`); the demo builds its
//! objects as Kubernetes documents and loads them through the same path (`load_str`).
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
//! | 4 | `check`, `diff`: a rule is broken (the findings are on stdout) |
//!
//! `watch` has its own meaning for 3 and 4 (`gangpack watch --help`).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use gangpack_cli::{
    DEFAULT_KEY, Effect, Format, Input, Options, Policy, Run, Style, TaintRequest, TaintTargetSpec,
};

/// Exit status: I/O failure (output could not be written).
const EXIT_FAILURE: u8 = gangpack_cli::EXIT_FAILURE;

const EXIT_HELP: &str = "\
Exit status:
  0  success: everything pending was placed (plan), or the command did what it was asked
  1  failure: a file or stdin could not be read, or output could not be written
  2  invalid input or usage: every input problem is printed to stderr, one per line
  3  plan: at least one pod or PodGroup stays pending (or is refused as invalid or failed)
  4  check, diff: a rule is broken (the findings are on stdout)";

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
#[allow(
    clippy::struct_excessive_bools,
    reason = "clap's on/off flags, each its own switch"
)]
pub(crate) struct Global {
    /// How to choose among feasible nodes and racks: best-fit (the tightest), spread
    /// (the emptiest), stranding (where a pod strands the least GPU, CPU and memory for
    /// the workload's typical shapes), fgd (Fragmentation Gradient Descent: where the
    /// workload's expected GPU fragmentation grows least), gang-aware (stranding that
    /// keeps whole racks whole for gangs: `--protect-key`, `--lower-domain`).
    /// `fragmentation-aware` is deprecated and means fgd [default: best-fit;
    /// `simulate`: every policy].
    #[arg(
        help_heading = "Global options",
        long,
        global = true,
        ignore_case = true,
        value_name = "POLICY",
        value_parser = policy_parser()
    )]
    pub(crate) policy: Option<PolicyArg>,
    /// The typical shapes stranding and fgd score against, a YAML or JSON file:
    /// `shapes: [{weight, deviceClassName, count, cpu, memory, capacity, selectors:
    /// [{cel}], pods, topologyKey}]`. Default: the shapes of every pod in the input,
    /// running and pending. Not with best-fit or spread.
    #[arg(
        help_heading = "Global options",
        long,
        global = true,
        value_name = "FILE"
    )]
    pub(crate) workload_mix: Option<String>,
    /// Gang-aware: a node label key whose domains are kept whole when a placement
    /// can avoid breaking into them (repeatable; the keys pending PodGroups require
    /// are protected anyway).
    #[arg(
        help_heading = "Global options",
        long = "protect-key",
        global = true,
        value_name = "KEY"
    )]
    pub(crate) protect_key: Vec<String>,
    /// Gang-aware: a level inside a gang's domain to pack it into the fewest of, a
    /// node label key or `device:ATTRIBUTE` (repeatable, outermost first).
    #[arg(
        help_heading = "Global options",
        long = "lower-domain",
        global = true,
        value_name = "KEY|device:ATTR",
        value_parser = gangpack_cli::parse_lower_domain
    )]
    pub(crate) lower_domain: Vec<gangpack::DomainLevel>,
    /// Seed for the demo's random choices (which GPU fails) and for `gen`'s scenario.
    /// Planning never uses randomness: ties are broken by name, so the same input
    /// gives the same output.
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
    #[arg(help_heading = "Global options", long, global = true, value_name = "RFC3339", value_parser = gangpack_cli::parse_rfc3339_arg)]
    pub(crate) now: Option<gangpack::Time>,
    /// The most steps one gang search takes (a step: one pod tried on one node, or one
    /// device choice revisited). When it runs out the unit stays pending, reported as
    /// undecided with this budget named, not as "does not fit".
    #[arg(
        help_heading = "Global options",
        long,
        global = true,
        default_value_t = gangpack::DEFAULT_STEP_BUDGET,
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "N"
    )]
    pub(crate) step_budget: u64,
    /// The most steps one claim allocation takes (a step: one candidate device tried).
    /// One that runs out leaves the unit pending, undecided, with this budget named.
    #[arg(
        help_heading = "Global options",
        long,
        global = true,
        default_value_t = gangpack::DEFAULT_ALLOCATOR_STEP_BUDGET,
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "N"
    )]
    pub(crate) allocator_step_budget: u64,
    /// The most bytes one input file (or stdin) may have; a larger one is refused
    /// unread. `K`, `M`, `G` or `Ki`, `Mi`, `Gi` suffixes [default: 1Gi].
    #[arg(help_heading = "Global options", long, global = true, value_name = "BYTES", value_parser = gangpack_cli::parse_size_arg)]
    pub(crate) max_input_bytes: Option<usize>,
    /// How much YAML aliases may add to one input file, in values (a value, a key or a
    /// byte of string each): the guard against alias bombs [default: 1000000].
    #[arg(help_heading = "Global options", long, global = true, value_name = "N", value_parser = gangpack_cli::parse_size_arg)]
    pub(crate) max_alias_expansion: Option<usize>,
    /// Print each phase's wall time and the peak RSS on stderr as it ends (parse,
    /// build — split into conversion to the API types and gangpack's model and index —
    /// plan, explain, write).
    #[arg(help_heading = "Global options", long, global = true)]
    pub(crate) timings: bool,
    /// Work in one namespace, as `kubectl -n`: namespaced objects of the input that
    /// name no namespace are in NS (as `kubectl apply -n NS` puts them), and only NS's
    /// pending pods and PodGroups are scheduled, shown and explained (a bare PODGROUP or
    /// --pod name is in NS). The rest of the cluster still counts: nodes, devices and
    /// other namespaces' running pods and allocated claims hold their capacity.
    #[arg(
        help_heading = "Global options",
        short = 'n',
        long,
        global = true,
        value_name = "NS",
        conflicts_with = "all_namespaces"
    )]
    pub(crate) namespace: Option<String>,
    /// Every namespace (the default): every pending pod and PodGroup is scheduled, and
    /// objects that name no namespace are in `default`.
    #[arg(help_heading = "Global options", short = 'A', long, global = true)]
    pub(crate) all_namespaces: bool,
    /// kube-scheduler feature gates to change from their Kubernetes 1.37 defaults,
    /// `Name=true|false` separated by commas. Known: `PodGroupPreemptionPolicy` (off by
    /// default: a PodGroup's pods must share one preemptionPolicy, which decides; on:
    /// the PodGroup's own preemptionPolicy decides and every pod must match it).
    #[arg(help_heading = "Global options", long, global = true, value_name = "GATES", value_parser = gangpack_cli::parse_feature_gates)]
    pub(crate) feature_gates: Option<gangpack_cli::FeatureGates>,
}

/// `--policy`: the policy, and whether it was named by a deprecated alias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PolicyArg {
    pub(crate) policy: Policy,
    pub(crate) deprecated: bool,
}

/// `--policy`'s values: the policies' names (in errors and `--help`), and the
/// deprecated `fragmentation-aware`, hidden.
fn policy_parser() -> impl clap::builder::TypedValueParser<Value = PolicyArg> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    let names = Policy::NAMES.into_iter().map(PossibleValue::new);
    PossibleValuesParser::new(names.chain([PossibleValue::new("fragmentation-aware").hide(true)]))
        .map(|name: String| PolicyArg {
            policy: Policy::parse(&name).expect("every possible value is a policy"),
            deprecated: Policy::is_deprecated_name(&name),
        })
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

/// The input files of a command.
#[derive(Debug, Args)]
pub(crate) struct Inputs {
    /// A file or directory of manifests (`*.yaml`, `*.yml`, `*.json`, read recursively);
    /// `-` reads stdin. Repeat the flag for more, or separate paths with commas. Inputs
    /// are read in order: an object a later input defines again replaces the earlier
    /// one, as `kubectl apply` updates it (a warning names both); twice in one file is
    /// an error. Input without a single object (an empty file, a List with no items) is
    /// an error. `resource.k8s.io/v1beta1|v1beta2` objects are converted to `v1`, with a
    /// warning: a default 1.37 API server does not serve those versions.
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
    /// minimal set of them blocking it, and a first line saying what would help (agreeing with the next cycle).
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
        /// Instead, every node for one pod of the unit: the filter that rejects it and
        /// why, or how many pods it takes and its score (natural name order).
        #[arg(long)]
        nodes: bool,
        /// With --nodes: `table`, or the node table as `json` / `yaml`.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Table, requires = "nodes")]
        output: Format,
    },
    /// What a new taint would do: who is evicted and when, which gangs break, and where
    /// the evicted gangs could go. Nothing is changed anywhere.
    #[command(after_help = EXIT_HELP)]
    Taint(TaintArgs),
    /// A built-in cluster (4 racks x 8 nodes x 8 H100s, training gangs, inference pods,
    /// failing GPUs): placements, a pending gang explained, a GPU failure that evicts a
    /// gang. No arguments needed.
    #[command(after_help = EXIT_HELP)]
    Demo {
        /// Print the demo's manifests (YAML) instead of running it.
        #[arg(long)]
        manifests: bool,
    },
    /// Which request shapes the free capacity can still host, per topology domain
    /// (single pods of 1, 2, 4 and 8 devices, and a gang of --gang-pods x 8), and how
    /// fragmented it is. Nothing is scheduled.
    #[command(after_help = EXIT_HELP)]
    Capacity {
        #[command(flatten)]
        inputs: Inputs,
        /// The node label grouping nodes into domains [default: the first PodGroup
        /// topology key in the input; without one, the whole cluster].
        #[arg(long, value_name = "LABEL", conflicts_with = "whole")]
        key: Option<String>,
        /// The whole cluster as one domain.
        #[arg(long)]
        whole: bool,
        /// Pods of the gang shape (each with 8 devices); 1 leaves it out.
        #[arg(long, default_value_t = 8, value_name = "N")]
        gang_pods: u32,
        /// `table`, or `json`: the report as data.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = CapacityFormat::Table)]
        output: CapacityFormat,
    },
    /// Check a cluster's state with the independent validator: the bindings and claim
    /// allocations in the dump as they are (whoever made them), or after the decision
    /// objects of --decisions are applied over it. Every broken rule is printed with its
    /// stable name and the objects involved.
    #[command(after_help = EXIT_HELP)]
    Check {
        #[command(flatten)]
        inputs: Inputs,
        /// Decisions to apply over the dump first (docs/DECISIONS.md): v1 Bindings
        /// (pods/binding), merge patches of the dump's objects (a Pod with only
        /// spec.nodeName, a ResourceClaim with only status), or whole objects as
        /// `gangpack plan -o yaml` writes them (replacing the dump's, or added). A
        /// decision naming an object the dump lacks, or changing what the API keeps
        /// immutable, is an error (exit 2).
        #[arg(long, value_name = "PATH", value_delimiter = ',')]
        decisions: Vec<String>,
        /// Hold the pods and claims already running to the rules of placement too (node
        /// NoSchedule taints, cordons, node selectors and affinity, device NoSchedule
        /// taints), as if they had just been placed.
        #[arg(long)]
        admission: bool,
        /// `table`: one paragraph per finding and a verdict; `json` / `yaml`: the list of
        /// findings, each `{rule, message, objects}`.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Table)]
        output: Format,
    },
    /// Compare two schedulers' decisions for the same dump: the validator's verdict on
    /// each, pods placed by one only or on different nodes, devices left unallocated,
    /// gangs split, evictions.
    #[command(after_help = EXIT_HELP)]
    Diff {
        #[command(flatten)]
        inputs: Inputs,
        /// Our decision objects (e.g. `gangpack plan -o yaml`).
        #[arg(long, value_name = "PATH", required = true, value_delimiter = ',')]
        ours: Vec<String>,
        /// Their decision objects, in the same shape.
        #[arg(long, value_name = "PATH", required = true, value_delimiter = ',')]
        theirs: Vec<String>,
        /// `table`, or `json` / `yaml`: the comparison as data.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Table)]
        output: Format,
    },
    /// Generate a cluster and its workload (seeded by the global --seed, default 0)
    /// and print it as Kubernetes 1.37 manifests, a `kind: List` that `gangpack plan
    /// -f -` and `kubectl apply -f -` read, or with --events as the watch events of a
    /// cluster getting there, that `gangpack watch -f -` reads. The same seed, size,
    /// kind and features print the same bytes. With --fleet NODES: a large fleet
    /// instead (blocks of 32 racks of 16 nodes of 8 H100s, about 1 % of the GPUs
    /// tainted, 70 % allocated to running gangs and pods, a pending block-local gang);
    /// `--fleet 12500` is 100,000 GPUs.
    ///
    /// --features aims the scenario at a scheduler: a feature switched off appears
    /// nowhere in it. The features: `sharing` (shareable GPUs, capacity requests),
    /// `partitioning` (partitionable GPUs: shared counters), `device-taints` (taints on
    /// devices, DeviceTaintRules, device tolerations), `node-taints` (node taints,
    /// cordoned nodes, pod tolerations), `topology` (rack and block constraints of
    /// PodGroups), `composite-groups` (PodGroups of a leader and workers),
    /// `priorities` (PriorityClasses; without, every pod has priority 0), `cel` (CEL
    /// selectors: request selectors and every DeviceClass but one, which then has
    /// none), `admin-access` (requests with adminAccess), `first-available`
    /// (firstAvailable requests), `allocation-mode-all` (allocationMode: All),
    /// `constraints` (matchAttribute and distinctAttribute). Every one is on by default
    /// (the scenarios gen always printed).
    ///
    /// --events prints JSON watch events (`{"type": "ADDED", "object": {...}}`, as
    /// `kubectl get --watch --output-watch-events -o json` prints them, with increasing
    /// resourceVersions): the cluster and its running work first, then, a minute apart,
    /// the pending work arriving one unit at a time among node taints and cordons, a
    /// driver's device taints and DeviceTaintRules (NoExecute among them), node status
    /// updates that move the clock, and removals (a pod, a drained node, a node's
    /// ResourceSlices). Every MODIFIED or DELETED object was ADDED before; the clock
    /// (the latest timestamp of the objects, as `watch` reads it) never goes back.
    #[command(after_help = EXIT_HELP)]
    Gen {
        /// A large fleet of NODES nodes (8 GPUs each, 1 to 100000; 12500 = 100,000
        /// GPUs) instead of a --size scenario; a summary line goes to stderr.
        #[arg(
            long,
            value_name = "NODES",
            conflicts_with_all = ["size", "kind", "features", "events"],
            value_parser = clap::value_parser!(u32).range(1..=i64::from(gangpack_cli::MAX_FLEET_NODES))
        )]
        fleet: Option<u32>,
        /// How big: `small` (a few nodes, a handful of units), `medium` (about a dozen
        /// nodes), `large` (dozens of nodes in up to eight racks).
        #[arg(long, value_enum, default_value_t = gangpack_cli::Size::Small, ignore_case = true)]
        size: gangpack_cli::Size,
        /// Which workloads: `gangs` (PodGroups with a gang policy, their Workloads and
        /// pods), `pods` (pods without a PodGroup), `mixed` (both).
        #[arg(long, value_enum, default_value_t = gangpack_cli::WorkloadKind::Mixed, ignore_case = true)]
        kind: gangpack_cli::WorkloadKind,
        /// What the scenario may contain: `all`, `none`, or a comma-separated list
        /// applied left to right: NAME or +NAME switches a feature on, -NAME off
        /// (`all,-sharing,-partitioning`, `none,+topology`); a plain list of names is
        /// exactly those (`topology,node-taints`). The names are in --help.
        #[arg(long, value_name = "FEATURES", default_value = "all")]
        features: gangpack::testing::Features,
        /// Print the scenario as JSON watch events (what `gangpack watch -f` reads)
        /// with taints, removals and clock steps along the way, instead of a List.
        #[arg(long, conflicts_with = "output")]
        events: bool,
        /// `yaml` or `json`.
        #[arg(short = 'o', long = "output", value_enum, default_value_t = ManifestFormat::Yaml)]
        output: ManifestFormat,
    },
    /// Follow a cluster through kubectl's watch streams (`kubectl get KIND -A --watch
    /// --output-watch-events -o json`, one per kind) and, after each scheduling cycle,
    /// print what changed: units bound, evicted, placed, preempted, newly pending with
    /// their verdict. Nothing is sent to the cluster.
    #[command(after_help = WATCH_HELP, after_long_help = WATCH_HELP)]
    Watch(WatchArgs),
    /// Replay a GPU cluster trace (Alibaba openb, the FGD paper's protocol) through the
    /// engine: per seed the pods shuffled and inflated to 1.3x capacity, scheduled one
    /// at a time; prints unallocated GPU % at 100 % arrived per policy.
    Simulate(simulate::SimulateArgs),
    /// Reduce a failing scenario to a small one that still fails: a shell command
    /// judges each candidate (e.g. run your scheduler, then `gangpack check`); whole
    /// objects go first, then list items, then fields. Prints the smallest failing
    /// scenario found (stdout or -o) and a summary on stderr.
    #[command(after_help = shrink::SHRINK_HELP, after_long_help = shrink::SHRINK_HELP)]
    Shrink(shrink::ShrinkArgs),
}

/// `gangpack gen -o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ManifestFormat {
    Yaml,
    Json,
}

impl ManifestFormat {
    fn format(self) -> Format {
        match self {
            ManifestFormat::Yaml => Format::Yaml,
            ManifestFormat::Json => Format::Json,
        }
    }
}

/// `gangpack capacity -o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CapacityFormat {
    Table,
    Json,
}

/// `gangpack taint` arguments.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").required(true).args(["device", "node", "rule"])))]
pub(crate) struct TaintArgs {
    #[command(flatten)]
    inputs: Inputs,
    /// Taint one device, `DRIVER/POOL/DEVICE` (as the driver would in its ResourceSlice).
    #[arg(long, value_name = "DRIVER/POOL/DEVICE")]
    device: Option<String>,
    /// Taint a node (as `kubectl taint nodes` would).
    #[arg(long, value_name = "NODE")]
    node: Option<String>,
    /// Apply the DeviceTaintRule in this file (replacing a loaded rule of the same
    /// name). With effect None it is a dry run: nothing is evicted, the output says
    /// what NoExecute would do.
    #[arg(long, value_name = "FILE")]
    rule: Option<String>,
    /// The taint's effect [default: NoExecute].
    #[arg(long, value_enum, conflicts_with = "rule", ignore_case = true)]
    effect: Option<Effect>,
    /// The taint's key.
    #[arg(long, default_value = DEFAULT_KEY, conflicts_with = "rule")]
    key: String,
    /// The taint's value.
    #[arg(
        long,
        default_value = "",
        conflicts_with = "rule",
        hide_default_value = true
    )]
    value: String,
    /// Run one scheduling cycle first (as `plan` does) and taint the state after it.
    #[arg(long)]
    after_plan: bool,
    /// `table`: the blast radius; `yaml` / `json`: the objects the eviction controllers
    /// would change, as a List.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Table)]
    output: Format,
}

impl TaintArgs {
    fn request(&self) -> TaintRequest {
        let target = if let Some(rule) = &self.rule {
            TaintTargetSpec::Rule(Input::Paths(vec![rule.clone()]))
        } else if let Some(device) = &self.device {
            TaintTargetSpec::Device {
                device: device.clone(),
                effect: self.effect,
                key: self.key.clone(),
                value: self.value.clone(),
            }
        } else {
            TaintTargetSpec::Node {
                node: self.node.clone().unwrap_or_default(),
                effect: self.effect,
                key: self.key.clone(),
                value: self.value.clone(),
            }
        };
        TaintRequest {
            target,
            after_plan: self.after_plan,
        }
    }
}

/// `gangpack watch` arguments.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// A watch stream: what `kubectl get KIND -A --watch --output-watch-events -o json`
    /// prints (JSON events one after another). A regular file (a recorded stream), a
    /// FIFO or pipe (`<(kubectl ...)`), or `-` for stdin. Repeat the flag for more, or
    /// separate paths with commas.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "STREAM",
        required = true,
        value_delimiter = ','
    )]
    streams: Vec<String>,
    /// A starting dump (`kubectl get -o yaml|json`, read as `plan` reads its input):
    /// the objects before the first event. A stream's own listing of an object
    /// replaces it.
    #[arg(long, value_name = "PATH", value_delimiter = ',')]
    initial: Vec<String>,
    /// Run a cycle once the live sources (FIFOs, pipes, stdin) have been quiet this
    /// many milliseconds after a change; 0: never on quiet.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    quiet_ms: u64,
    /// Also run a cycle after every N events applied.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    /// Also judge the cluster's own decisions with the rules of `gangpack check`:
    /// print each finding when it first holds, and when it clears.
    #[arg(long)]
    audit: bool,
    /// `table`: a header and one line per change, per cycle; `json`: one JSON object
    /// per cycle, on one line.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = WatchFormat::Table)]
    output: WatchFormat,
}

/// `gangpack watch -o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum WatchFormat {
    Table,
    Json,
}

const WATCH_HELP: &str = "\
Following a cluster (one stream per kind; kubectl watches one kind at a time):
  gangpack watch -f <(kubectl get nodes -A --watch --output-watch-events -o json) \\
                 -f <(kubectl get resourceslices -A --watch --output-watch-events -o json) \\
                 -f <(kubectl get pods -A --watch --output-watch-events -o json) ...

Order: --initial first; then regular files, each whole, in the order given; then live
sources (FIFOs, pipes, stdin) as events arrive. A cycle runs on quiet (--quiet-ms, live
sources), every N events (--every) and at the end of the input, after changes. Each
cycle is `gangpack plan` on the current objects; nothing is written to the cluster.

Bad streams: the event changes nothing; messages name the source, the event
(FILE event N) and the object. Warnings (the objects still match the cluster): an
object of a kind gangpack does not read, DELETED of an object never added. Errors
(exit 2 at the end; the watch goes on): ADDED of an object already added, MODIFIED of
an object never added, a malformed or invalid object (a warning with --skip-invalid),
JSON that is not a watch event or does not parse; bytes that cannot start an object,
an object over --max-input-bytes, or a stream cut inside an object (the byte offset is
given) end that source. An ERROR event (410 Gone: the watch expired; list again)
stops every source; a last cycle runs.

Exit status:
  0  every source ended; no error
  1  a source or the output could not be read or written
  2  invalid input or usage: an error was printed (the watch went on)
  3  an ERROR event ended the watch (410 Gone: list again and restart)
  4  --audit: a rule of `gangpack check` is broken at the last cycle";

/// Where `gangpack watch` writes: stdout as each cycle comes, messages on stderr.
struct Terminal {
    style: Style,
}

impl gangpack_cli::WatchSink for Terminal {
    /// Each cycle as it comes; a closed pipe (`gangpack watch ... | head`) ends the
    /// watch quietly.
    fn output(&mut self, text: &str) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    }

    fn message(&mut self, m: &gangpack_cli::WatchMessage) {
        if m.is_error() {
            message(self.style, "error:", "31", m.text());
        } else {
            message(self.style, "warning:", "33", m.text());
        }
    }
}

impl Global {
    /// The policy `--policy` names, if any.
    fn policy(&self) -> Option<Policy> {
        self.policy.map(|p| p.policy)
    }

    /// The options of the global flags, `--workload-mix` read.
    fn options(&self) -> Result<Options, gangpack_cli::Failure> {
        let policy = self.policy().unwrap_or(Policy::BestFit);
        let workload_mix = match &self.workload_mix {
            Some(path) => Some(gangpack_cli::read_workload_mix(policy, path)?),
            None => None,
        };
        gangpack_cli::gang_aware_flags(policy, &self.protect_key, &self.lower_domain)?;
        Ok(Options {
            policy,
            workload_mix,
            protect: self.protect_key.clone(),
            levels: self.lower_domain.clone(),
            seed: self.seed,
            skip_invalid: self.skip_invalid,
            strict: self.strict,
            now: self.now,
            step_budget: self.step_budget,
            allocator_step_budget: self.allocator_step_budget,
            namespace: self.namespace.clone(),
            pod_group_preemption_policy: self
                .feature_gates
                .clone()
                .unwrap_or_default()
                .enabled("PodGroupPreemptionPolicy"),
            limits: gangpack_k8s::Limits {
                max_input_bytes: self
                    .max_input_bytes
                    .unwrap_or(gangpack_k8s::Limits::DEFAULT_MAX_INPUT_BYTES),
                max_alias_expansion: self
                    .max_alias_expansion
                    .unwrap_or(gangpack_k8s::Limits::DEFAULT_MAX_ALIAS_EXPANSION),
            },
        })
    }
}

/// `--color` for one stream: `always` / `never` win; `auto` colours only a terminal,
/// and only when `NO_COLOR` is unset or empty (<https://no-color.org>).
fn style(choice: ColorChoice, is_terminal: bool) -> Style {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    Style::new(match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && !no_color,
    })
}

/// One stderr line, `label` painted.
fn message(style: Style, label: &str, code: &str, text: &str) {
    let label = if style.is_color() {
        format!("\x1b[{code}m{label}\x1b[0m")
    } else {
        label.to_owned()
    };
    let _ = writeln!(std::io::stderr().lock(), "{label} {text}");
}

mod shrink;
mod simulate;
mod timings;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let err_style = style(cli.global.color, std::io::stderr().is_terminal());
    let out_style = style(cli.global.color, std::io::stdout().is_terminal());
    if cli.global.policy.is_some_and(|p| p.deprecated) {
        message(err_style, "warning:", "33", gangpack_cli::DEPRECATED_POLICY);
    }
    if cli.global.workload_mix.is_some() && matches!(cli.command, Command::Simulate(_)) {
        message(
            err_style,
            "error:",
            "31",
            "--workload-mix: simulate does not read a workload mix",
        );
        return ExitCode::from(gangpack_cli::EXIT_INVALID);
    }
    let options = match cli.global.options() {
        Ok(options) => options,
        Err(failure) => {
            for line in failure.lines() {
                message(err_style, "error:", "31", &line);
            }
            return ExitCode::from(failure.code());
        }
    };
    timings::install(cli.global.timings, std::io::stderr().is_terminal());
    // What a command planned on, left unfreed: the process exits once it has printed.
    let mut kept = None;
    let run: Run = match &cli.command {
        Command::Plan { inputs, output } => {
            let (run, snapshot) = gangpack_cli::plan_keeping(
                &Input::Paths(inputs.paths.clone()),
                &options,
                *output,
                out_style,
            );
            kept = snapshot;
            run
        }
        Command::Explain {
            inputs,
            group,
            pod,
            nodes: true,
            output,
        } => gangpack_cli::explain_nodes(
            &Input::Paths(inputs.paths.clone()),
            &options,
            group.as_deref(),
            pod.as_deref(),
            *output,
        ),
        Command::Explain {
            inputs, group, pod, ..
        } => {
            let (run, snapshot) = gangpack_cli::explain_keeping(
                &Input::Paths(inputs.paths.clone()),
                &options,
                group.as_deref(),
                pod.as_deref(),
            );
            kept = snapshot;
            run
        }
        Command::Taint(args) => gangpack_cli::taint(
            &Input::Paths(args.inputs.paths.clone()),
            &options,
            &args.request(),
            args.output,
            out_style,
        ),
        Command::Demo { manifests } => gangpack_cli::demo(&options, *manifests, out_style),
        Command::Capacity {
            inputs,
            key,
            whole,
            gang_pods,
            output,
        } => gangpack_cli::capacity(
            &Input::Paths(inputs.paths.clone()),
            &options,
            &match (key, whole) {
                (Some(k), _) => gangpack_cli::CapacityKey::Label(k.clone()),
                (None, true) => gangpack_cli::CapacityKey::Whole,
                (None, false) => gangpack_cli::CapacityKey::Default,
            },
            *gang_pods,
            *output == CapacityFormat::Json,
        ),
        Command::Check {
            inputs,
            decisions,
            admission,
            output,
        } => gangpack_cli::check(
            &Input::Paths(inputs.paths.clone()),
            (!decisions.is_empty())
                .then(|| Input::Paths(decisions.clone()))
                .as_ref(),
            &options,
            *admission,
            *output,
            out_style,
        ),
        Command::Diff {
            inputs,
            ours,
            theirs,
            output,
        } => gangpack_cli::diff(
            &Input::Paths(inputs.paths.clone()),
            &Input::Paths(ours.clone()),
            &Input::Paths(theirs.clone()),
            &options,
            *output,
            out_style,
        ),
        Command::Gen {
            fleet: Some(nodes),
            output,
            ..
        } => {
            let (run, summary) =
                gangpack_cli::generate_fleet(*nodes, cli.global.seed, output.format());
            if run.failure.is_none() {
                let _ = writeln!(std::io::stderr().lock(), "gangpack gen --fleet: {summary}");
            }
            run
        }
        Command::Gen {
            size,
            kind,
            features,
            events,
            output,
            ..
        } => {
            let spec = gangpack_cli::GenSpec {
                seed: cli.global.seed,
                size: *size,
                kind: *kind,
                features: *features,
            };
            if *events {
                gangpack_cli::generate_events(&spec)
            } else {
                gangpack_cli::generate(&spec, output.format())
            }
        }
        Command::Watch(args) => {
            let initial = (!args.initial.is_empty()).then(|| Input::Paths(args.initial.clone()));
            let sources: Vec<gangpack_cli::WatchSource> = args
                .streams
                .iter()
                .map(|p| gangpack_cli::WatchSource::Path(p.clone()))
                .collect();
            let watch = gangpack_cli::WatchOptions {
                quiet_ms: args.quiet_ms,
                every: args.every.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                audit: args.audit,
                json: args.output == WatchFormat::Json,
            };
            let code = gangpack_cli::watch(
                initial.as_ref(),
                &sources,
                &options,
                &watch,
                out_style,
                &mut Terminal { style: err_style },
            );
            timings::finish();
            return ExitCode::from(code);
        }
        Command::Shrink(args) => {
            let code = shrink::run(args, options.limits.max_input_bytes, err_style);
            timings::finish();
            return ExitCode::from(code);
        }
        Command::Simulate(args) => match simulate::simulate(args, cli.global.policy()) {
            Ok(stdout) => Run {
                stdout,
                warnings: Vec::new(),
                code: gangpack_cli::EXIT_OK,
                failure: None,
            },
            Err(e) => {
                message(err_style, "error:", "31", &e.to_string());
                return ExitCode::from(match e {
                    gangpack_sim::run::SimError::Io(..)
                    | gangpack_sim::run::SimError::Engine(_) => EXIT_FAILURE,
                    _ => gangpack_cli::EXIT_INVALID,
                });
            }
        },
    };
    timings::finish();
    // Freeing a large input's objects and model one by one takes longer than the
    // operating system takes to reclaim them at exit (about a second of a
    // 100,000-GPU plan or explain).
    std::mem::forget(kept);
    for w in &run.warnings {
        message(err_style, "warning:", "33", w);
    }
    if let Some(failure) = &run.failure {
        for line in failure.lines() {
            message(err_style, "error:", "31", &line);
        }
        return ExitCode::from(run.code);
    }
    match write_stdout(&run.stdout) {
        Ok(()) => ExitCode::from(run.code),
        Err(e) => {
            message(
                err_style,
                "error:",
                "31",
                &format!("cannot write output: {e}"),
            );
            ExitCode::from(EXIT_FAILURE)
        }
    }
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
