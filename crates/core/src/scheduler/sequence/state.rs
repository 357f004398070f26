//! The sequence batcher's decisions (direct strategy), free of threads and
//! clocks: every call gets the current time.
//!
//! Each instance owns `max_batch_size` sequence slots (one without
//! batching). A request starting a sequence takes a free slot, or waits in
//! the backlog until one frees; every later request of that sequence goes
//! to the same slot. A free instance takes the next request of each of its
//! slots as one batch. The request carrying the END flag frees its slot
//! when it is taken; a sequence that sent nothing for the idle time loses
//! its slot. A slot is freed only by the sequence occupying it, once.

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

/// A request's sequence flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub start: bool,
    pub end: bool,
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

/// A sequence and the requests it queued.
#[derive(Debug)]
struct Sequence<T> {
    corrid: CorrId,
    queue: VecDeque<(T, Flags)>,
    /// Its END request arrived: no more requests join it.
    ended: bool,
    /// When it last queued or started a request.
    last: Instant,
}

impl<T> Sequence<T> {
    fn new(corrid: CorrId, item: T, flags: Flags, now: Instant) -> Self {
        Self {
            corrid,
            queue: VecDeque::from([(item, flags)]),
            ended: flags.end,
            last: now,
        }
    }

    fn push(&mut self, item: T, flags: Flags, now: Instant) {
        self.queue.push_back((item, flags));
        self.ended |= flags.end;
        self.last = now;
    }
}

/// Where a sequence holding a slot sits: (instance, slot).
type SlotId = (usize, usize);

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
        }
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

    /// Refuses new requests; the queued ones still execute.
    pub fn stop(&mut self) {
        self.stopped = true;
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

    /// What free instance `instance` does at `now`.
    pub fn next(&mut self, instance: usize, now: Instant) -> Next<T> {
        self.release_idle(now);
        let mut batch = Vec::new();
        for slot in 0..self.slots_per_instance {
            let Some(sequence) = self.slots[instance][slot].as_mut() else {
                continue;
            };
            let Some((item, flags)) = sequence.queue.pop_front() else {
                continue;
            };
            sequence.last = now;
            let control = Control {
                start: flags.start,
                end: flags.end,
                ready: true,
                corrid: sequence.corrid.clone(),
            };
            if flags.end {
                self.release((instance, slot));
            }
            batch.push(Dispatch { item, control });
        }
        if !batch.is_empty() {
            return Next::Batch(batch);
        }
        if self.stopped && self.len() == 0 {
            return Next::Stopped;
        }
        match self.next_idle_deadline() {
            Some(at) => Next::WaitUntil(at),
            None => Next::WaitForRequests,
        }
    }

    /// The earliest time a sequence holding a slot becomes idle.
    pub fn next_idle_deadline(&self) -> Option<Instant> {
        self.slots
            .iter()
            .flatten()
            .flatten()
            .filter(|s| s.queue.is_empty())
            .map(|s| s.last + self.max_idle)
            .min()
    }

    /// Frees the slots of sequences that queued nothing for the idle time
    /// (once stopped, of every sequence with nothing queued, so that the
    /// backlog drains).
    fn release_idle(&mut self, now: Instant) {
        let mut idle = Vec::new();
        for (instance, slots) in self.slots.iter().enumerate() {
            for (slot, sequence) in slots.iter().enumerate() {
                if let Some(s) = sequence
                    && s.queue.is_empty()
                    && (self.stopped || now.saturating_duration_since(s.last) >= self.max_idle)
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
            .filter_map(|(instance, slots)| {
                let free = slots.iter().filter(|s| s.is_none()).count();
                let slot = slots.iter().position(Option::is_none)?;
                Some((free, std::cmp::Reverse(instance), (instance, slot)))
            })
            .max()
            .map(|(_, _, at)| at)
    }
}
