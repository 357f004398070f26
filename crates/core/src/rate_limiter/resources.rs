//! The rate limiter's resource accounting (Triton's resource manager): what
//! each registered instance needs, how much of each resource there is, and
//! how much is allocated now.

use std::collections::{BTreeMap, HashMap};

use oxiserve_proto::inference::ModelRateLimiter;

use super::queue::InstanceId;
use crate::config::ResourceCount;

/// Where a resource's count applies: shared by all devices (`global: true`),
/// or one count per device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Scope {
    Global,
    Device(i32),
}

/// A resource on one scope.
type Key = (Scope, String);

/// Units per resource.
type Counts = BTreeMap<Key, u64>;

/// The resources of the registered instances.
#[derive(Debug, Default)]
pub(super) struct Resources {
    /// The counts `--rate-limit-resource` gives: per device, or for every
    /// device (`None`); the smaller count where one is given twice.
    explicit: BTreeMap<(Option<i32>, String), u64>,
    needs: HashMap<InstanceId, Counts>,
    /// Each resource's count: the explicit one, else the largest need.
    limits: Counts,
    allocated: Counts,
}

impl Resources {
    /// Accounting with the command line's counts.
    pub fn new(counts: &[ResourceCount]) -> Self {
        let mut explicit = BTreeMap::new();
        for count in counts {
            explicit
                .entry((count.device, count.name.clone()))
                .and_modify(|c: &mut u64| *c = (*c).min(count.count))
                .or_insert(count.count);
        }
        Self {
            explicit,
            ..Self::default()
        }
    }

    /// Adds the needs of instance `id` on `device`; refused, with Triton's
    /// words, when the resources could never satisfy it.
    pub fn add(
        &mut self,
        id: InstanceId,
        device: i32,
        config: &ModelRateLimiter,
    ) -> Result<(), String> {
        let mut needs = Counts::new();
        for resource in &config.resources {
            let scope = if resource.global {
                Scope::Global
            } else {
                Scope::Device(device)
            };
            needs.insert((scope, resource.name.clone()), u64::from(resource.count));
        }
        self.needs.insert(id, needs);
        match self.compute_limits() {
            Ok(limits) => {
                self.limits = limits;
                Ok(())
            }
            Err(e) => {
                self.needs.remove(&id);
                Err(e)
            }
        }
    }

    /// Forgets instance `id`, which holds nothing.
    pub fn remove(&mut self, id: InstanceId) {
        self.needs.remove(&id);
        if let Ok(limits) = self.compute_limits() {
            self.limits = limits;
        }
    }

    /// Allocates what `id` needs if all of it is free now.
    pub fn try_allocate(&mut self, id: InstanceId) -> bool {
        let Some(needs) = self.needs.get(&id) else {
            return false;
        };
        let fits = needs.iter().all(|(key, need)| {
            let used = self.allocated.get(key).copied().unwrap_or(0);
            let limit = self.limits.get(key).copied().unwrap_or(0);
            used + need <= limit
        });
        if fits {
            for (key, need) in needs {
                *self.allocated.entry(key.clone()).or_default() += need;
            }
        }
        fits
    }

    /// Gives back what `id` holds (what it needs, allocated earlier).
    pub fn release(&mut self, id: InstanceId) {
        let Some(needs) = self.needs.get(&id) else {
            return;
        };
        for (key, need) in needs {
            if let Some(used) = self.allocated.get_mut(key) {
                *used = used.saturating_sub(*need);
            }
        }
    }

    /// The units of `name` allocated now on `scope`.
    #[cfg(test)]
    pub fn allocated(&self, scope: Scope, name: &str) -> u64 {
        let key = (scope, name.to_string());
        self.allocated.get(&key).copied().unwrap_or(0)
    }

    /// The count of `name` on `scope`.
    #[cfg(test)]
    pub fn limit(&self, scope: Scope, name: &str) -> Option<u64> {
        self.limits.get(&(scope, name.to_string())).copied()
    }

    /// Each resource's count for the needs registered: the largest need,
    /// or the command line's count, which must cover it.
    fn compute_limits(&self) -> Result<Counts, String> {
        let mut largest = Counts::new();
        for needs in self.needs.values() {
            for (key, need) in needs {
                let entry = largest.entry(key.clone()).or_default();
                *entry = (*entry).max(*need);
            }
        }
        if !self.explicit.is_empty() {
            for ((scope, name), need) in &mut largest {
                let count = self.explicit_count(*scope, name);
                if count < *need {
                    return Err(format!(
                        "Resource count for \"{name}\" is limited to {count} which will prevent \
                         scheduling of one or more model instances, the minimum required count \
                         is {need}"
                    ));
                }
                *need = count;
            }
        }
        check_scopes(&largest)?;
        Ok(largest)
    }

    /// The command line's count of `name` on `scope`, 0 when it names none:
    /// a global resource takes the largest count given for the name on any
    /// device; a device's, the largest of its own and the every-device one.
    fn explicit_count(&self, scope: Scope, name: &str) -> u64 {
        self.explicit
            .iter()
            .filter(|((device, given), _)| {
                given == name
                    && match scope {
                        Scope::Global => true,
                        Scope::Device(d) => device.is_none() || *device == Some(d),
                    }
            })
            .map(|(_, count)| *count)
            .max()
            .unwrap_or(0)
    }
}

/// Refuses a resource that is global for some instances and per device for
/// others.
fn check_scopes(counts: &Counts) -> Result<(), String> {
    let global = counts
        .keys()
        .filter(|(scope, _)| *scope == Scope::Global)
        .map(|(_, name)| name);
    for name in global {
        let per_device = counts
            .keys()
            .any(|(scope, other)| *scope != Scope::Global && other == name);
        if per_device {
            return Err(format!(
                "Resource \"{name}\" is present as both global and device-specific resource in \
                 the model configuration."
            ));
        }
    }
    Ok(())
}
