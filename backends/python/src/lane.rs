//! Lanes: direct BLS calls between two model processes
//! (docs/design/python-backend.md §7.2).
//!
//! An instance of a model that takes direct calls listens on a Unix socket,
//! its lane, in a folder only the server's user can enter. A BLS call that
//! went through the server and succeeded is followed by a `LaneOffer`: the
//! calling process may send later calls of the same shape straight to that
//! lane, and the called process answers there, so that neither server
//! thread is on the call's path. The called process reports those
//! executions for the model's statistics (`LaneExecuted`).

use std::{
    collections::HashMap,
    os::unix::fs::DirBuilderExt,
    path::PathBuf,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
};

use oxiserve_proto::{
    ModelConfig,
    inference::{model_config::SchedulingChoice, model_version_policy::PolicyChoice},
};
use parking_lot::Mutex;

/// Longest socket path the kernel takes (`sun_path` less its final NUL).
const MAX_PATH: usize = 107;

/// One instance's lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lane {
    pub path: PathBuf,
    /// Triton's instance name (`add_sub_0_0`), for error texts.
    pub instance: String,
}

/// The open lanes of the backend's models, by model name and version.
#[derive(Debug, Default)]
pub(crate) struct Lanes {
    /// The private folder of the lanes; made on first use, `None` if it
    /// cannot be (lanes are then off).
    dir: OnceLock<Option<PathBuf>>,
    next: AtomicU64,
    open: Mutex<HashMap<(String, i64), Vec<Lane>>>,
}

impl Lanes {
    /// A fresh socket path for an instance's lane; `None` when lanes cannot
    /// be made here.
    pub fn new_path(&self) -> Option<PathBuf> {
        let dir = self.dir.get_or_init(make_dir).as_ref()?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{n}.lane"));
        (path.as_os_str().len() <= MAX_PATH).then_some(path)
    }

    /// `lane` of an instance of `model` at `version` takes calls until the
    /// returned guard is dropped.
    pub fn open(self: &Arc<Self>, model: &str, version: i64, lane: Lane) -> OpenLane {
        let path = lane.path.clone();
        self.open
            .lock()
            .entry((model.to_string(), version))
            .or_default()
            .push(lane);
        OpenLane {
            lanes: self.clone(),
            path,
        }
    }

    /// The lane at `path` is gone with its process.
    fn close(&self, path: &PathBuf) {
        self.open.lock().retain(|_, lanes| {
            lanes.retain(|l| &l.path != path);
            !lanes.is_empty()
        });
        let _ = std::fs::remove_file(path);
    }

    /// A lane of `model` at `version` for a caller whose own lane (if it has
    /// one) is `own`, spreading callers over the other instances by `pick`.
    /// A process is never offered its own lane: its main thread, waiting for
    /// the answer, could not run the call.
    pub fn offer(
        &self,
        model: &str,
        version: i64,
        pick: u64,
        own: Option<&PathBuf>,
    ) -> Option<Lane> {
        let open = self.open.lock();
        let lanes: Vec<&Lane> = open
            .get(&(model.to_string(), version))?
            .iter()
            .filter(|l| Some(&l.path) != own)
            .collect();
        (!lanes.is_empty()).then(|| lanes[pick as usize % lanes.len()].clone())
    }
}

/// An open lane; closes it when dropped (with its process).
#[derive(Debug)]
pub(crate) struct OpenLane {
    lanes: Arc<Lanes>,
    path: PathBuf,
}

impl Drop for OpenLane {
    fn drop(&mut self) {
        self.lanes.close(&self.path);
    }
}

/// What the pump of an instance's own process needs for direct calls: the
/// lanes it offers to its process's BLS calls, the model version whose
/// statistics its lane's executions join, and the process's own lane (never
/// offered to it).
#[derive(Debug, Clone)]
pub(crate) struct DirectCalls {
    pub lanes: Arc<Lanes>,
    pub version: i64,
    pub own_lane: Option<PathBuf>,
}

impl Drop for Lanes {
    fn drop(&mut self) {
        if let Some(Some(dir)) = self.dir.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A folder for lanes that only this user may enter, unique to this server.
fn make_dir() -> Option<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("oxiserve-{}-{stamp}", std::process::id()));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Some(dir),
        Err(e) => {
            log::warn!(
                "python backend: no direct BLS calls: cannot create {}: {e}",
                dir.display()
            );
            None
        }
    }
}

/// Whether a model's instances take direct calls: only where the server's
/// scheduler adds nothing to a call but the statistics, which the lane
/// reports. A decoupled model, a batcher, the response cache or the rate
/// limiter keep every call on the server's path; so does a version policy
/// that serves several versions at once (a call for the latest must reach
/// the newest one, while a lane stays with the version that offered it).
pub(crate) fn takes_direct_calls(config: &ModelConfig) -> bool {
    let decoupled = config
        .model_transaction_policy
        .as_ref()
        .is_some_and(|p| p.decoupled);
    let cached = config.response_cache.as_ref().is_some_and(|c| c.enable);
    let rate_limited = config
        .instance_group
        .iter()
        .any(|g| g.rate_limiter.is_some());
    let scheduled = matches!(
        config.scheduling_choice,
        Some(SchedulingChoice::DynamicBatching(_) | SchedulingChoice::SequenceBatching(_))
    );
    let one_version = match config
        .version_policy
        .as_ref()
        .and_then(|p| p.policy_choice.as_ref())
    {
        None => true,
        Some(PolicyChoice::Latest(latest)) => latest.num_versions <= 1,
        Some(PolicyChoice::Specific(specific)) => specific.versions.len() <= 1,
        Some(PolicyChoice::All(_)) => false,
    };
    one_version && !(decoupled || cached || rate_limited || scheduled)
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::{
        ModelDynamicBatching, ModelInstanceGroup, ModelRateLimiter, ModelVersionPolicy,
        model_version_policy::{All, Latest},
    };

    use super::*;

    #[test]
    fn only_models_the_scheduler_adds_nothing_to_take_direct_calls() {
        assert!(takes_direct_calls(&ModelConfig::default()));
        let batched = ModelConfig {
            scheduling_choice: Some(SchedulingChoice::DynamicBatching(
                ModelDynamicBatching::default(),
            )),
            ..Default::default()
        };
        assert!(!takes_direct_calls(&batched));
        let limited = ModelConfig {
            instance_group: vec![ModelInstanceGroup {
                rate_limiter: Some(ModelRateLimiter::default()),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(!takes_direct_calls(&limited));
        let policy = |choice| ModelConfig {
            version_policy: Some(ModelVersionPolicy {
                policy_choice: Some(choice),
            }),
            ..Default::default()
        };
        assert!(takes_direct_calls(&policy(PolicyChoice::Latest(Latest {
            num_versions: 1
        }))));
        assert!(!takes_direct_calls(&policy(PolicyChoice::Latest(Latest {
            num_versions: 2
        }))));
        assert!(!takes_direct_calls(&policy(PolicyChoice::All(All {}))));
    }

    #[test]
    fn offers_spread_over_instances_and_end_with_them() {
        let lanes = Arc::new(Lanes::default());
        let lane = |n: &str| Lane {
            path: PathBuf::from(format!("/nonexistent/{n}.lane")),
            instance: n.to_string(),
        };
        let a = lanes.open("m", 1, lane("a"));
        let b = lanes.open("m", 1, lane("b"));
        assert_eq!(lanes.offer("m", 1, 0, None), Some(lane("a")));
        assert_eq!(lanes.offer("m", 1, 1, None), Some(lane("b")));
        assert_eq!(lanes.offer("m", 2, 0, None), None);
        let own = lane("a").path;
        assert_eq!(lanes.offer("m", 1, 0, Some(&own)), Some(lane("b")));
        assert_eq!(lanes.offer("m", 1, 1, Some(&own)), Some(lane("b")));
        drop(a);
        assert_eq!(lanes.offer("m", 1, 0, None), Some(lane("b")));
        assert_eq!(lanes.offer("m", 1, 0, Some(&lane("b").path)), None);
        drop(b);
        assert_eq!(lanes.offer("m", 1, 0, None), None);
    }
}
