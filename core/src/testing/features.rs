//! What a generated scenario may contain, feature by feature: [`Features`] (a switch
//! per [`Feature`]), as `gangpack gen --features` spells it.

use core::fmt;
use core::str::FromStr;

use crate::alloc_prelude::*;

/// One thing a scheduler may or may not support, switched on or off in generated
/// scenarios by [`Features`]. Its [`name`](Feature::name) is what `gangpack gen
/// --features` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// `sharing`: shareable GPUs (`allowMultipleAllocations`, a memory capacity with a
    /// request policy; the class `shared.gangpack.dev`) and claims requesting capacity
    /// (`capacity.requests`): DRA consumable capacity.
    Sharing,
    /// `partitioning`: partitionable GPUs (`sharedCounters` on a slice of their own, a
    /// full device and two halves with `consumesCounters`; the class
    /// `partition.gangpack.dev`).
    Partitioning,
    /// `device-taints`: taints drivers put on devices, DeviceTaintRules, and the
    /// claims' device tolerations.
    DeviceTaints,
    /// `node-taints`: node taints, cordoned nodes (`spec.unschedulable`, which
    /// Kubernetes turns into a taint), and the pods' tolerations.
    NodeTaints,
    /// `topology`: PodGroups with a rack or block topology constraint.
    Topology,
    /// `composite-groups`: PodGroups of a leader without GPUs and GPU workers (besides
    /// groups of identical pods).
    CompositeGroups,
    /// `priorities`: PriorityClasses and pods and PodGroups that use them (without it
    /// every pod has priority 0 and the default preemption policy).
    Priorities,
    /// `cel`: CEL selectors: a request's `selectors`, and every DeviceClass but
    /// `gpu.gangpack.dev` (which then has no selector: every generated device is its
    /// driver's).
    Cel,
    /// `admin-access`: requests with `adminAccess`, in a namespace labelled for it.
    AdminAccess,
    /// `first-available`: requests with `firstAvailable` sub-requests (else `exactly`).
    FirstAvailable,
    /// `allocation-mode-all`: requests with `allocationMode: All`.
    AllocationModeAll,
    /// `constraints`: claims with `matchAttribute` or `distinctAttribute` constraints.
    Constraints,
}

impl Feature {
    /// Every feature, in the order [`Features`]' `Display` lists them.
    pub const ALL: [Feature; 12] = [
        Feature::Sharing,
        Feature::Partitioning,
        Feature::DeviceTaints,
        Feature::NodeTaints,
        Feature::Topology,
        Feature::CompositeGroups,
        Feature::Priorities,
        Feature::Cel,
        Feature::AdminAccess,
        Feature::FirstAvailable,
        Feature::AllocationModeAll,
        Feature::Constraints,
    ];

    /// The name `--features` takes (`sharing`, `device-taints`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Feature::Sharing => "sharing",
            Feature::Partitioning => "partitioning",
            Feature::DeviceTaints => "device-taints",
            Feature::NodeTaints => "node-taints",
            Feature::Topology => "topology",
            Feature::CompositeGroups => "composite-groups",
            Feature::Priorities => "priorities",
            Feature::Cel => "cel",
            Feature::AdminAccess => "admin-access",
            Feature::FirstAvailable => "first-available",
            Feature::AllocationModeAll => "allocation-mode-all",
            Feature::Constraints => "constraints",
        }
    }

    /// The feature of a name (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which [`Feature`]s generated scenarios may contain: a switch each. A feature
/// switched off appears nowhere in the scenario (no object, field or value of it), so
/// a scheduler that lacks it can be tested on the rest. [`ScenarioConfig`] holds one
/// (`features`); every preset has [`Features::ALL`].
///
/// As text (`gangpack gen --features`, [`FromStr`] and [`Display`](fmt::Display)): a
/// comma-separated list of items applied left to right: `all` and `none` set every
/// switch; `NAME` or `+NAME` switches a feature on, `-NAME` off. The list starts from
/// `all`, unless it names a feature bare: a plain list of names is exactly those.
///
/// ```
/// use gangpack::testing::{Feature, Features, ScenarioConfig, generate};
///
/// let f: Features = "all,-sharing,-partitioning".parse().unwrap();
/// assert!(!f.sharing && !f.partitioning && f.topology);
/// assert_eq!(f, "-sharing,-partitioning".parse().unwrap());
/// assert_eq!(f.to_string(), "all,-sharing,-partitioning");
///
/// let only: Features = "topology,node-taints".parse().unwrap();
/// assert_eq!(only, Features::NONE.with(Feature::Topology).with(Feature::NodeTaints));
/// assert_eq!(only, "none,+topology,+node-taints".parse().unwrap());
///
/// let e = "sharng".parse::<Features>().unwrap_err();
/// assert!(e.to_string().contains("did you mean \"sharing\"?"));
///
/// // A scenario for a scheduler without shared or partitioned GPUs:
/// let config = ScenarioConfig { features: f, ..ScenarioConfig::small() };
/// let s = generate(&config, 7);
/// assert!(s.slices.iter().all(|x| x.shared_counters.is_empty()
///     && x.devices.iter().all(|d| !d.allow_multiple_allocations)));
/// ```
///
/// [`ScenarioConfig`]: super::ScenarioConfig
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::struct_excessive_bools)] // independent switches, by design
pub struct Features {
    /// [`Feature::Sharing`].
    pub sharing: bool,
    /// [`Feature::Partitioning`].
    pub partitioning: bool,
    /// [`Feature::DeviceTaints`].
    pub device_taints: bool,
    /// [`Feature::NodeTaints`].
    pub node_taints: bool,
    /// [`Feature::Topology`].
    pub topology: bool,
    /// [`Feature::CompositeGroups`].
    pub composite_groups: bool,
    /// [`Feature::Priorities`].
    pub priorities: bool,
    /// [`Feature::Cel`].
    pub cel: bool,
    /// [`Feature::AdminAccess`].
    pub admin_access: bool,
    /// [`Feature::FirstAvailable`].
    pub first_available: bool,
    /// [`Feature::AllocationModeAll`].
    pub allocation_mode_all: bool,
    /// [`Feature::Constraints`].
    pub constraints: bool,
}

impl Features {
    /// Every feature on: the presets' default.
    pub const ALL: Features = Features::every(true);

    /// Every feature off: whole exclusive GPUs, `ExactCount` requests of a class
    /// without selector, no taints, priorities or topology; gangs of identical pods,
    /// `basic` groups and single pods.
    pub const NONE: Features = Features::every(false);

    const fn every(on: bool) -> Features {
        Features {
            sharing: on,
            partitioning: on,
            device_taints: on,
            node_taints: on,
            topology: on,
            composite_groups: on,
            priorities: on,
            cel: on,
            admin_access: on,
            first_available: on,
            allocation_mode_all: on,
            constraints: on,
        }
    }

    /// Whether `feature` is on.
    pub const fn get(&self, feature: Feature) -> bool {
        match feature {
            Feature::Sharing => self.sharing,
            Feature::Partitioning => self.partitioning,
            Feature::DeviceTaints => self.device_taints,
            Feature::NodeTaints => self.node_taints,
            Feature::Topology => self.topology,
            Feature::CompositeGroups => self.composite_groups,
            Feature::Priorities => self.priorities,
            Feature::Cel => self.cel,
            Feature::AdminAccess => self.admin_access,
            Feature::FirstAvailable => self.first_available,
            Feature::AllocationModeAll => self.allocation_mode_all,
            Feature::Constraints => self.constraints,
        }
    }

    /// Switches `feature` on or off.
    pub fn set(&mut self, feature: Feature, on: bool) {
        let switch = match feature {
            Feature::Sharing => &mut self.sharing,
            Feature::Partitioning => &mut self.partitioning,
            Feature::DeviceTaints => &mut self.device_taints,
            Feature::NodeTaints => &mut self.node_taints,
            Feature::Topology => &mut self.topology,
            Feature::CompositeGroups => &mut self.composite_groups,
            Feature::Priorities => &mut self.priorities,
            Feature::Cel => &mut self.cel,
            Feature::AdminAccess => &mut self.admin_access,
            Feature::FirstAvailable => &mut self.first_available,
            Feature::AllocationModeAll => &mut self.allocation_mode_all,
            Feature::Constraints => &mut self.constraints,
        };
        *switch = on;
    }

    /// These features with `feature` on.
    #[must_use]
    pub fn with(mut self, feature: Feature) -> Features {
        self.set(feature, true);
        self
    }

    /// These features with `feature` off.
    #[must_use]
    pub fn without(mut self, feature: Feature) -> Features {
        self.set(feature, false);
        self
    }

    /// The features on, in [`Feature::ALL`] order.
    pub fn on(&self) -> impl Iterator<Item = Feature> + '_ {
        Feature::ALL.into_iter().filter(|f| self.get(*f))
    }

    /// The features off, in [`Feature::ALL`] order.
    pub fn off(&self) -> impl Iterator<Item = Feature> + '_ {
        Feature::ALL.into_iter().filter(|f| !self.get(*f))
    }
}

impl Default for Features {
    fn default() -> Features {
        Features::ALL
    }
}

impl fmt::Display for Features {
    /// The shortest of the canonical forms: `all`, `none`, `all,-NAME,...` (when at
    /// most half are off) or `NAME,...` (the features on). It parses back to the same
    /// features.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let off = self.off().count();
        if off == 0 {
            return f.write_str("all");
        }
        if off == Feature::ALL.len() {
            return f.write_str("none");
        }
        if 2 * off <= Feature::ALL.len() {
            f.write_str("all")?;
            for x in self.off() {
                write!(f, ",-{x}")?;
            }
            return Ok(());
        }
        for (i, x) in self.on().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(x.name())?;
        }
        Ok(())
    }
}

/// Why a `--features` list does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeaturesError {
    /// An empty list, or an empty item (`topology,,cel`).
    Empty,
    /// A name that is no [`Feature`]'s (nor `all` or `none`), with the closest name
    /// when one is close.
    Unknown {
        /// The name as given (without its `+` or `-`).
        name: String,
        /// The closest valid name, if any is close enough.
        suggestion: Option<&'static str>,
    },
    /// `+all`, `-none`, ...: `all` and `none` take no sign.
    SignedKeyword(String),
}

impl FeaturesError {
    fn valid_names(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the features are ")?;
        for (i, x) in Feature::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(x.name())?;
        }
        f.write_str(" (`all` and `none` set every one; NAME or +NAME switches one on, -NAME off)")
    }
}

impl fmt::Display for FeaturesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeaturesError::Empty => f.write_str("an empty feature name: ")?,
            FeaturesError::Unknown { name, suggestion } => {
                write!(f, "unknown feature {name:?}")?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean {s:?}?)")?;
                }
                f.write_str(": ")?;
            }
            FeaturesError::SignedKeyword(k) => {
                write!(f, "{k:?}: `all` and `none` take no + or -: ")?;
            }
        }
        FeaturesError::valid_names(f)
    }
}

impl core::error::Error for FeaturesError {}

impl FromStr for Features {
    type Err = FeaturesError;

    fn from_str(s: &str) -> Result<Features, FeaturesError> {
        let items: Vec<&str> = s.split(',').map(str::trim).collect();
        let mut parsed = Vec::with_capacity(items.len());
        for item in items {
            parsed.push(parse_item(item)?);
        }
        let bare = parsed
            .iter()
            .any(|i| matches!(i, Item::Switch(_, Sign::Bare)));
        let mut features = if bare { Features::NONE } else { Features::ALL };
        for item in parsed {
            match item {
                Item::All => features = Features::ALL,
                Item::None => features = Features::NONE,
                Item::Switch(x, sign) => features.set(x, sign != Sign::Minus),
            }
        }
        Ok(features)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sign {
    Bare,
    Plus,
    Minus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    All,
    None,
    Switch(Feature, Sign),
}

/// One item of a `--features` list.
fn parse_item(item: &str) -> Result<Item, FeaturesError> {
    let (sign, name) = match item.as_bytes().first() {
        Some(b'+') => (Sign::Plus, item[1..].trim_start()),
        Some(b'-') => (Sign::Minus, item[1..].trim_start()),
        _ => (Sign::Bare, item),
    };
    if name.is_empty() {
        return Err(FeaturesError::Empty);
    }
    let keyword = match name.to_ascii_lowercase().as_str() {
        "all" => Some(Item::All),
        "none" => Some(Item::None),
        _ => None,
    };
    if let Some(k) = keyword {
        return if sign == Sign::Bare {
            Ok(k)
        } else {
            Err(FeaturesError::SignedKeyword(item.into()))
        };
    }
    match Feature::from_name(name) {
        Some(x) => Ok(Item::Switch(x, sign)),
        None => Err(FeaturesError::Unknown {
            name: name.into(),
            suggestion: closest(name),
        }),
    }
}

/// The valid name closest to `name` (a feature's, `all` or `none`): within an edit
/// distance of a third of its length (at least 2), or containing `name` (3 characters
/// or more) or contained in it.
fn closest(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase().replace('_', "-");
    let names = Feature::ALL.iter().map(|f| f.name()).chain(["all", "none"]);
    let mut best: Option<(usize, &'static str)> = None;
    for candidate in names {
        let d = edit_distance(&name, candidate);
        let near = d <= (candidate.len() / 3).max(2);
        let part = name.len() >= 3 && (candidate.contains(&*name) || name.contains(candidate));
        if (near || part) && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance between two strings, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Feature::ALL {
            assert_eq!(Feature::from_name(f.name()), Some(f));
            assert_eq!(Features::NONE.with(f).to_string(), f.name());
            assert_eq!(
                Features::ALL.without(f).to_string(),
                format!("all,-{}", f.name())
            );
        }
    }

    #[test]
    fn the_list_forms() {
        let parse = |s: &str| s.parse::<Features>();
        assert_eq!(parse("all"), Ok(Features::ALL));
        assert_eq!(parse("none"), Ok(Features::NONE));
        assert_eq!(
            parse(" none , +cel "),
            Ok(Features::NONE.with(Feature::Cel))
        );
        assert_eq!(parse("-cel"), Ok(Features::ALL.without(Feature::Cel)));
        assert_eq!(parse("+cel"), Ok(Features::ALL));
        assert_eq!(parse("cel"), Ok(Features::NONE.with(Feature::Cel)));
        assert_eq!(parse("CEL,Topology"), parse("cel,topology"));
        assert_eq!(
            parse("cel,-cel,none,topology"),
            Ok(Features::NONE.with(Feature::Topology))
        );
        assert_eq!(parse(""), Err(FeaturesError::Empty));
        assert_eq!(parse("cel,,topology"), Err(FeaturesError::Empty));
        assert_eq!(parse("cel,-"), Err(FeaturesError::Empty));
        assert_eq!(
            parse("+all"),
            Err(FeaturesError::SignedKeyword("+all".into()))
        );
    }

    #[test]
    fn unknown_names_get_a_suggestion() {
        let suggestion = |s: &str| match s.parse::<Features>() {
            Err(FeaturesError::Unknown { suggestion, .. }) => suggestion,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(suggestion("sharng"), Some("sharing"));
        assert_eq!(suggestion("-node_taints"), Some("node-taints"));
        assert_eq!(suggestion("priority"), Some("priorities"));
        assert_eq!(suggestion("cel-selectors"), Some("cel"));
        assert_eq!(suggestion("first-avail"), Some("first-available"));
        assert_eq!(suggestion("nonee"), Some("none"));
        assert_eq!(suggestion("gpu"), None);
        let text = "topology,partitoning"
            .parse::<Features>()
            .unwrap_err()
            .to_string();
        assert!(
            text.starts_with("unknown feature \"partitoning\" (did you mean \"partitioning\"?): the features are sharing, partitioning,"),
            "{text}"
        );
    }

    #[test]
    fn display_parses_back() {
        // Every subset of the first six features, the rest on or off.
        for bits in 0u32..(1 << 6) {
            for rest in [false, true] {
                let mut f = if rest { Features::ALL } else { Features::NONE };
                for (i, x) in Feature::ALL.iter().take(6).enumerate() {
                    f.set(*x, bits & (1 << i) != 0);
                }
                assert_eq!(f.to_string().parse::<Features>(), Ok(f), "{f}");
            }
        }
    }
}
