//! Cluster objects: Namespaces, Nodes, DeviceClasses, ResourceSlices and DeviceTaintRules.

use std::collections::BTreeMap;

use gangpack::ClusterError;
use serde_json::Value;

use super::{Builder, DEVICE_CLASS_RESOURCE_PREFIX};
use crate::convert;
use crate::convert::de::{input_error, validation_error};
use crate::object::{InputErrors, Kind, Object};

impl Builder<'_> {
    fn cluster_error(&self, i: usize, e: &ClusterError) -> InputErrors {
        let obj = self.obj(i);
        let mut errs = InputErrors::default();
        match e {
            ClusterError::Invalid(list) => {
                for v in list {
                    errs.push(validation_error(obj, v));
                }
            }
            other => errs.push(input_error(obj, String::new(), other)),
        }
        errs
    }

    pub(super) fn namespace(&mut self, i: usize) {
        if let Some(labels) = self.convert(i, convert::namespace_labels) {
            let name = self.obj(i).name.clone();
            self.namespaces.insert(name, labels);
        }
    }

    pub(super) fn add_node(&mut self, i: usize, node: gangpack::Node) {
        let resources: Vec<String> = node.allocatable.keys().cloned().collect();
        match self.cluster.add_node(node) {
            Ok(_) => self.node_resources.extend(resources),
            Err(e) => {
                let errs = self.cluster_error(i, &e);
                self.reject(i, errs);
            }
        }
    }

    pub(super) fn device_class(&mut self, i: usize) {
        let Some(class) = self.convert(i, convert::resource::device_class) else {
            return;
        };
        if let Err(e) = self.cluster.put_class(class) {
            let errs = self.cluster_error(i, &e);
            self.reject(i, errs);
        }
    }

    /// Extended resource name → class: each class's implicit name, then the explicit
    /// `extendedResourceName`s (when several classes name the same resource, the most
    /// recently created wins, ties to the first name, as upstream).
    pub(super) fn map_extended_resources(&mut self) {
        let mut explicit: BTreeMap<String, (gangpack::Time, String)> = BTreeMap::new();
        for class in self.cluster.classes() {
            self.extended.insert(
                format!("{DEVICE_CLASS_RESOURCE_PREFIX}{}", class.name),
                class.name.clone(),
            );
            let Some(name) = &class.extended_resource_name else {
                continue;
            };
            let created = self
                .find(Kind::DeviceClass, None, &class.name)
                .ok()
                .map(|i| creation_of(self.obj(i)))
                .unwrap_or_default();
            let better = explicit
                .get(name)
                .is_none_or(|(t, n)| created > *t || (created == *t && class.name < *n));
            if better {
                explicit.insert(name.clone(), (created, class.name.clone()));
            }
        }
        for (resource, (_, class)) in explicit {
            self.extended.insert(resource, class);
        }
    }

    pub(super) fn add_slice(&mut self, i: usize, slice: gangpack::ResourceSlice) {
        if let Err(e) = self.cluster.add_slice(slice) {
            let errs = self.cluster_error(i, &e);
            self.reject(i, errs);
        }
    }

    pub(super) fn taint_rule(&mut self, i: usize) {
        let Some(rule) = self.convert(i, convert::resource::device_taint_rule) else {
            return;
        };
        if let Err(e) = self.cluster.add_taint_rule(rule) {
            let errs = self.cluster_error(i, &e);
            self.reject(i, errs);
        }
    }
}

fn creation_of(o: &Object) -> gangpack::Time {
    o.raw
        .get("metadata")
        .and_then(|m| m.get("creationTimestamp"))
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .map(|t| gangpack::Time(t.as_second()))
        .unwrap_or_default()
}
