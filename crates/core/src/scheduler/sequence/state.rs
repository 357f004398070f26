//! The sequence batcher's sequence slots, free of threads and clocks: every
//! call gets the current time.
//!
//! Each instance owns a number of sequence slots (`max_batch_size`, or
//! `max_candidate_sequences` with the oldest strategy; one at least). A
//! request starting a sequence takes a free slot, or waits in the backlog
//! until one frees; every later request of that sequence goes to the same
//! slot. The request carrying the END flag frees its slot when it is taken;
//! a sequence that sent nothing for the idle time loses its slot. A slot is
//! freed only by the sequence occupying it, once.
//!
//! A request may carry a timeout (its `timeout` parameter). A sequence
//! waiting in the backlog expires at the earliest arrival plus timeout of
//! the requests it queued there: [`State::expire`] gives it up, with all
//! its requests, and forgets it, as Triton's reaper does. A sequence holding
//! a slot never expires.
//!
//! [`State::next`] is the direct strategy: a free instance takes the next
//! request of each of its slots as one batch. The oldest strategy
//! ([`super::oldest`]) picks among [`State::candidates`] instead and waits
//! for each request it takes to complete before its sequence's next request
//! may go.

use std::{
    collections::{HashMap, VecDeque},
    fmt,
    time::{Duration, Instant},
};

/// A sequence's correlation id: a non-zero integer or a non-empty string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum CorrId {
    Uint(u64),
    Str(String),
}

impl fmt::Display for CorrId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Uint(id) => write!(f, "{id}"),
            Self::Str(id) => f.write_str(id),
        }
    }
}

/// A request's sequence flags, and its timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub start: bool,
    pub end: bool,
    /// The request's `timeout` (none when absent or zero): how long its
    /// sequence may wait in the backlog for a slot.
    pub timeout: Option<Duration>,
}

/// The control values one request executes with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Control {
    pub start: bool,
    pub end: bool,
    pub ready: bool,
    pub corrid: CorrId,
}

/// A request taken for execution, with its control values.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Dispatch<T> {
    pub item: T,
    pub control: Control,
    /// The instance's slot its sequence holds.
    pub slot: usize,
}

/// The next request of a sequence that may execute now (oldest strategy).
#[derive(Debug)]
pub(crate) struct Candidate<'a, T> {
    pub slot: usize,
    pub item: &'a T,
    /// Since when it may execute: it arrived and its sequence's previous
    /// request completed.
    pub ready: Instant,
}

/// Why a request was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The batcher stopped.
    Stopped,
    /// No sequence with this id is in progress and the request lacks START.
    NotStarted,
}

/// What a free instance does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next<T> {
    /// Execute these requests together (at most one per slot).
    Batch(Vec<Dispatch<T>>),
    /// Ask again at this time (an idle sequence may lose its slot), or
    /// when a request arrives.
    WaitUntil(Instant),
    /// Ask again when a request arrives.
    WaitForRequests,
    /// Stopped and this instance's slots are drained.
    Stopped,
}

/// A queued request.
#[derive(Debug)]
struct Queued<T> {
    item: T,
    flags: Flags,
    arrived: Instant,
}

/// A sequence and the requests it queued.
#[derive(Debug)]
struct Sequence<T> {
    corrid: CorrId,
    queue: VecDeque<Queued<T>>,
    /// Its END request arrived: no more requests join it.
    ended: bool,
    /// When it last queued, started or completed a request.
    last: Instant,
    /// A request of it was taken and has not completed (oldest strategy).
    in_flight: bool,
    /// When its last request in flight completed (or it began).
    free_since: Instant,
    /// The earliest arrival plus timeout of its requests: in the backlog,
    /// the time it is given up.
    expires: Option<Instant>,
}

impl<T> Sequence<T> {
    fn new(corrid: CorrId, item: T, flags: Flags, now: Instant) -> Self {
        let mut sequence = Self {
            corrid,
            queue: VecDeque::new(),
            ended: false,
            last: now,
            in_flight: false,
            free_since: now,
            expires: None,
        };
        sequence.push(item, flags, now);
        sequence
    }

    fn push(&mut self, item: T, flags: Flags, now: Instant) {
        self.queue.push_back(Queued {
            item,
            flags,
            arrived: now,
        });
        self.ended |= flags.end;
        self.last = now;
        if let Some(at) = flags.timeout.and_then(|t| now.checked_add(t)) {
            self.expires = Some(self.expires.map_or(at, |e| e.min(at)));
        }
    }

    /// Whether it may lose its slot at `now`: nothing queued or in flight,
    /// and silent for `max_idle` (or at once, when `stopped`).
    fn is_idle(&self, now: Instant, max_idle: Duration, stopped: bool) -> bool {
        self.queue.is_empty()
            && !self.in_flight
            && (stopped || now.saturating_duration_since(self.last) >= max_idle)
    }
}

/// Where a sequence holding a slot sits: (instance, slot).
pub(crate) type SlotId = (usize, usize);

/// The slots of every instance, the sequences in them and the backlog.
#[derive(Debug)]
pub(crate) struct State<T> {
    slots_per_instance: usize,
    max_idle: Duration,
    /// `slots[instance][slot]`: the sequence holding it.
    slots: Vec<Vec<Option<Sequence<T>>>>,
    /// Sequences in progress (not ended) that hold a slot.
    active: HashMap<CorrId, SlotId>,
    /// Started sequences waiting for a free slot, oldest first.
    backlog: VecDeque<Sequence<T>>,
    stopped: bool,
    /// Slots freed so far (for tests: each free is counted once).
    released: u64,
    /// Instances an instance update removes: they take no new sequence and
    /// stop once the ones they hold end.
    leaving: Vec<usize>,
}

impl<T> State<T> {
    /// A state with `slots_per_instance` slots (0 counts as 1) per instance
    /// and the idle time after which a sequence loses its slot.
    pub fn new(slots_per_instance: usize, max_idle: Duration) -> Self {
        Self {
            slots_per_instance: slots_per_instance.max(1),
            max_idle,
            slots: Vec::new(),
            active: HashMap::new(),
            backlog: VecDeque::new(),
            stopped: false,
            released: 0,
            leaving: Vec::new(),
        }
    }

    /// Gives `instance` no new sequence (an instance update removes it).
    pub fn retire_instance(&mut self, instance: usize) {
        if !self.leaving.contains(&instance) {
            self.leaving.push(instance);
        }
    }

    /// Whether a sequence holds a slot of `instance`.
    pub fn holds_sequences(&self, instance: usize) -> bool {
        self.slots[instance].iter().any(Option::is_some)
    }

    /// Adds an instance with its slots; returns its index.
    pub fn add_instance(&mut self) -> usize {
        let slots = (0..self.slots_per_instance).map(|_| None).collect();
        self.slots.push(slots);
        self.slots.len() - 1
    }

    /// How many slots were freed so far.
    #[cfg(test)]
    pub fn released(&self) -> u64 {
        self.released
    }

    /// Requests queued and not yet taken.
    pub fn len(&self) -> usize {
        let in_slots: usize = self
            .slots
            .iter()
            .flatten()
            .flatten()
            .map(|s| s.queue.len())
            .sum();
        in_slots + self.backlog.iter().map(|s| s.queue.len()).sum::<usize>()
    }

    /// Sequences in progress: holding a slot (not ended) or in the backlog.
    pub fn sequences(&self) -> usize {
        self.active.len() + self.backlog.len()
    }

    /// Refuses new requests; the queued ones still execute.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether [`Self::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Queues a request of sequence `corrid` arriving at `now`, or says
    /// why not.
    pub fn enqueue(
        &mut self,
        item: T,
        corrid: CorrId,
        flags: Flags,
        now: Instant,
    ) -> Result<(), (T, Refusal)> {
        if self.stopped {
            return Err((item, Refusal::Stopped));
        }
        self.release_idle(now);
        if let Some(&(instance, slot)) = self.active.get(&corrid) {
            let sequence = self.slots[instance][slot]
                .as_mut()
                .expect("an active sequence holds its slot");
            sequence.push(item, flags, now);
            if flags.end {
                self.active.remove(&corrid);
            }
            return Ok(());
        }
        if let Some(waiting) = self
            .backlog
            .iter_mut()
            .find(|s| !s.ended && s.corrid == corrid)
        {
            waiting.push(item, flags, now);
            return Ok(());
        }
        if !flags.start {
            return Err((item, Refusal::NotStarted));
        }
        let sequence = Sequence::new(corrid, item, flags, now);
        match self.free_slot() {
            Some(at) => self.occupy(at, sequence),
            None => self.backlog.push_back(sequence),
        }
        Ok(())
    }

    /// What free instance `instance` does at `now` (direct strategy).
    pub fn next(&mut self, instance: usize, now: Instant) -> Next<T> {
        self.release_idle(now);
        let batch: Vec<_> = (0..self.slots_per_instance)
            .filter_map(|slot| self.take((instance, slot), now, false))
            .collect();
        if !batch.is_empty() {
            return Next::Batch(batch);
        }
        self.wait(None)
    }

    /// What an instance with nothing to take does: stop once stopped and
    /// drained, else ask again at `wake` or when a sequence may become
    /// idle, whichever comes first, or when something happens.
    pub fn wait<U>(&self, wake: Option<Instant>) -> Next<U> {
        if self.stopped && self.len() == 0 {
            return Next::Stopped;
        }
        match wake.into_iter().chain(self.next_idle_deadline()).min() {
            Some(at) => Next::WaitUntil(at),
            None => Next::WaitForRequests,
        }
    }

    /// The next request of each sequence of `instance` that has one queued
    /// and none in flight.
    pub fn candidates(&self, instance: usize) -> impl Iterator<Item = Candidate<'_, T>> {
        self.slots[instance]
            .iter()
            .enumerate()
            .filter_map(|(slot, sequence)| {
                let sequence = sequence.as_ref().filter(|s| !s.in_flight)?;
                let head = sequence.queue.front()?;
                Some(Candidate {
                    slot,
                    item: &head.item,
                    ready: head.arrived.max(sequence.free_since),
                })
            })
    }

    /// Takes the next request of the sequence in slot `at`, freeing the
    /// slot when it is the END request; with `in_flight`, the sequence's
    /// next request waits until [`Self::complete`] says this one completed.
    pub fn take(&mut self, at: SlotId, now: Instant, in_flight: bool) -> Option<Dispatch<T>> {
        let sequence = self.slots[at.0][at.1].as_mut()?;
        if sequence.in_flight {
            return None;
        }
        let Queued { item, flags, .. } = sequence.queue.pop_front()?;
        sequence.last = now;
        sequence.in_flight = in_flight && !flags.end;
        let control = Control {
            start: flags.start,
            end: flags.end,
            ready: true,
            corrid: sequence.corrid.clone(),
        };
        if flags.end {
            self.release(at);
        }
        Some(Dispatch {
            item,
            control,
            slot: at.1,
        })
    }

    /// The request in flight of the sequence in slot `at` completed at `now`.
    pub fn complete(&mut self, at: SlotId, now: Instant) {
        if let Some(sequence) = self.slots[at.0][at.1].as_mut()
            && sequence.in_flight
        {
            sequence.in_flight = false;
            sequence.last = now;
            sequence.free_since = now;
        }
    }

    /// Ends sequence `corrid` as its END request would (an iterative
    /// sequence's request was released for good): no request joins it any
    /// more, and its slot frees now, or once what it queued was taken.
    pub fn end(&mut self, corrid: &CorrId) {
        let Some(at) = self.active.remove(corrid) else {
            return;
        };
        if let Some(sequence) = self.slots[at.0][at.1].as_mut() {
            sequence.ended = true;
            if sequence.queue.is_empty() {
                self.release(at);
            }
        }
    }

    /// Gives up the sequences in the backlog whose time ran out at `now`:
    /// they are forgotten (a later request of theirs without START is
    /// refused) and their requests returned, to be rejected.
    pub fn expire(&mut self, now: Instant) -> Vec<T> {
        let mut expired = Vec::new();
        self.backlog.retain_mut(|sequence| {
            let keep = sequence.expires.is_none_or(|at| at > now);
            if !keep {
                expired.extend(sequence.queue.drain(..).map(|queued| queued.item));
            }
            keep
        });
        expired
    }

    /// The earliest time a sequence in the backlog expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.backlog.iter().filter_map(|s| s.expires).min()
    }

    /// The earliest time a sequence holding a slot becomes idle.
    fn next_idle_deadline(&self) -> Option<Instant> {
        self.slots
            .iter()
            .flatten()
            .flatten()
            .filter(|s| s.queue.is_empty() && !s.in_flight)
            .map(|s| s.last + self.max_idle)
            .min()
    }

    /// Frees the slots of sequences that queued nothing for the idle time
    /// (once stopped, of every sequence with nothing queued, so that the
    /// backlog drains).
    pub fn release_idle(&mut self, now: Instant) {
        let mut idle = Vec::new();
        for (instance, slots) in self.slots.iter().enumerate() {
            for (slot, sequence) in slots.iter().enumerate() {
                if let Some(s) = sequence
                    && s.is_idle(now, self.max_idle, self.stopped)
                {
                    idle.push((instance, slot));
                }
            }
        }
        for at in idle {
            self.release(at);
        }
    }

    /// Frees slot `at` and gives it to the oldest waiting sequence.
    fn release(&mut self, at: SlotId) {
        let Some(sequence) = self.slots[at.0][at.1].take() else {
            return;
        };
        self.released += 1;
        if self.active.get(&sequence.corrid) == Some(&at) {
            self.active.remove(&sequence.corrid);
        }
        if let Some(waiting) = self.backlog.pop_front() {
            self.occupy(at, waiting);
        }
    }

    fn occupy(&mut self, at: SlotId, sequence: Sequence<T>) {
        if !sequence.ended {
            self.active.insert(sequence.corrid.clone(), at);
        }
        self.slots[at.0][at.1] = Some(sequence);
    }

    /// A free slot, preferring the instance with the most free slots.
    fn free_slot(&self) -> Option<SlotId> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(instance, _)| !self.leaving.contains(instance))
            .filter_map(|(instance, slots)| {
                let free = slots.iter().filter(|s| s.is_none()).count();
                let slot = slots.iter().position(Option::is_none)?;
                Some((free, std::cmp::Reverse(instance), (instance, slot)))
            })
            .max()
            .map(|(_, _, at)| at)
    }
}

#[cfg(test)]
mod tests;
