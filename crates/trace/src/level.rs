//! What a trace records: `OFF`, `TIMESTAMPS`, `TENSORS` or both.

/// Triton's trace level, a set of `TIMESTAMPS` and `TENSORS`; empty is `OFF`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceLevel {
    pub timestamps: bool,
    pub tensors: bool,
}

impl TraceLevel {
    /// Tracing disabled.
    pub const OFF: TraceLevel = TraceLevel {
        timestamps: false,
        tensors: false,
    };
    /// Timestamps only.
    pub const TIMESTAMPS: TraceLevel = TraceLevel {
        timestamps: true,
        tensors: false,
    };
    /// Tensors only.
    pub const TENSORS: TraceLevel = TraceLevel {
        timestamps: false,
        tensors: true,
    };

    /// Whether nothing is traced.
    pub fn is_off(self) -> bool {
        self == Self::OFF
    }

    /// Both levels' records.
    pub fn union(self, other: TraceLevel) -> TraceLevel {
        TraceLevel {
            timestamps: self.timestamps || other.timestamps,
            tensors: self.tensors || other.tensors,
        }
    }

    /// The names the settings replies list: `["OFF"]`, or `TIMESTAMPS`
    /// and/or `TENSORS`.
    pub fn names(self) -> Vec<&'static str> {
        if self.is_off() {
            return vec!["OFF"];
        }
        let mut names = Vec::new();
        if self.timestamps {
            names.push("TIMESTAMPS");
        }
        if self.tensors {
            names.push("TENSORS");
        }
        names
    }
}
