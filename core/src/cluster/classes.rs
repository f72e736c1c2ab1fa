//! DeviceClasses: their CEL selectors compiled once and evaluated on every device, the
//! result kept current as slices come and go, so allocation tests one bit per device.

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, Problem, ValidationError};
use crate::{Device, DeviceClass};

use super::bits::DeviceSet;
use super::ids::DeviceId;
use super::{Cluster, ClusterError, not_found};

/// A DeviceClass compiled: its selectors, the devices they all accept, and the devices
/// on which evaluating them failed (a runtime error aborts an allocation upstream).
#[derive(Clone, Debug)]
pub(crate) struct ClassCache {
    selectors: Vec<crate::Selector>,
    pub(crate) matches: DeviceSet,
    /// Per device whose evaluation failed: which selector (index into the class's
    /// `spec.selectors`) and why. Selectors are evaluated in order and stop at the
    /// first `false` or error, as upstream's are.
    pub(crate) errors: BTreeMap<DeviceId, (usize, crate::EvalError)>,
}

impl ClassCache {
    pub(super) fn evaluate(&mut self, dev: DeviceId, driver: &str, device: &Device) {
        let mut ok = true;
        for (i, s) in self.selectors.iter().enumerate() {
            match s.eval(driver, device) {
                Ok(true) => {}
                Ok(false) => {
                    ok = false;
                    break;
                }
                Err(e) => {
                    self.errors.insert(dev, (i, e));
                    ok = false;
                    break;
                }
            }
        }
        self.matches.set(dev, ok);
    }

    /// The expression of selector `i` (as written).
    pub(crate) fn expression(&self, i: usize) -> &str {
        self.selectors.get(i).map_or("", crate::Selector::source)
    }

    pub(super) fn forget(&mut self, dev: DeviceId) {
        self.matches.remove(dev);
        self.errors.remove(&dev);
    }
}

impl Cluster {
    /// The devices a DeviceClass's selectors accept (any state), if the class exists.
    pub(crate) fn class_devices(&self, class: &str) -> Option<&DeviceSet> {
        self.class_cache.get(class).map(|c| &c.matches)
    }

    /// The devices a DeviceClass's selectors accept or fail on (any state), if the
    /// class exists: where an allocation may use a device of the class or abort on it.
    /// A failure is no mismatch: the placer's counts must not drop a node on which
    /// upstream's allocator would abort.
    pub(crate) fn class_devices_or_failing(
        &self,
        class: &str,
    ) -> Option<alloc::borrow::Cow<'_, DeviceSet>> {
        let cache = self.class_cache.get(class)?;
        if cache.errors.is_empty() {
            return Some(alloc::borrow::Cow::Borrowed(&cache.matches));
        }
        let mut set = cache.matches.clone();
        for &d in cache.errors.keys() {
            set.insert(d);
        }
        Some(alloc::borrow::Cow::Owned(set))
    }

    // ----------------------------------------------------------------- classes

    /// Adds or replaces a DeviceClass.
    ///
    /// Its CEL selectors are compiled now (an expression outside the supported subset
    /// is refused, with its position) and evaluated once on every device; the result is
    /// kept up to date as slices change.
    pub fn put_class(&mut self, class: DeviceClass) -> Result<(), ClusterError> {
        class.validate()?;
        let mut selectors = Vec::with_capacity(class.selectors.len());
        let mut errs = Vec::new();
        for (i, s) in class.selectors.iter().enumerate() {
            match crate::Selector::compile(&s.cel) {
                Ok(sel) => selectors.push(sel),
                Err(error) => errs.push(ValidationError::new(
                    class.object_ref(),
                    format!("spec.selectors[{i}].cel.expression"),
                    Problem::InvalidExpression {
                        message: error.to_string(),
                    },
                )),
            }
        }
        crate::model::error::finish(errs)?;
        let mut cache = ClassCache {
            selectors,
            matches: DeviceSet::with_universe(self.devices.len()),
            errors: BTreeMap::new(),
        };
        for dev in self.live.iter() {
            let slot = self.devices[dev.index()].as_ref().expect("live device id");
            let e = self.slice_entry(slot.slice);
            cache.evaluate(dev, &e.slice.driver, &e.slice.devices[slot.pos as usize]);
        }
        self.class_cache.insert(class.name.clone(), cache);
        self.classes.insert(class.name.clone(), class);
        self.resolve_scores();
        Ok(())
    }

    /// Removes a DeviceClass.
    pub fn remove_class(&mut self, name: &str) -> Result<DeviceClass, ClusterError> {
        self.class_cache.remove(name);
        let class = self
            .classes
            .remove(name)
            .ok_or_else(|| not_found(ObjectKind::DeviceClass, name))?;
        self.resolve_scores();
        Ok(class)
    }

    /// A DeviceClass by name.
    pub fn class(&self, name: &str) -> Option<&DeviceClass> {
        self.classes.get(name)
    }

    /// Every DeviceClass, by name.
    pub fn classes(&self) -> impl Iterator<Item = &DeviceClass> + '_ {
        self.classes.values()
    }
}
