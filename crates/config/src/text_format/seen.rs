//! Fields already set in one message: catches a singular field set twice and
//! two members of one oneof.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use prost_reflect::FieldDescriptor;

use super::error::{Position, Result, TextFormatError};

/// The singular fields and oneofs set so far in one message.
#[derive(Default)]
pub(super) struct Seen {
    /// Field number -> where it was set.
    fields: HashMap<u32, Position>,
    /// Oneof name -> the member set and where.
    oneofs: HashMap<String, (String, Position)>,
}

impl Seen {
    /// Notes that `field` is being set at `position`; an error when it is a
    /// singular field set before, or a oneof member whose oneof is taken.
    pub fn set(&mut self, field: &FieldDescriptor, position: Position) -> Result<()> {
        if field.is_list() || field.is_map() {
            return Ok(());
        }
        if let Some(first) = self.fields.insert(field.number(), position) {
            return Err(TextFormatError::new(
                position,
                format!("field '{}' is set twice (first at {first})", field.name()),
            ));
        }
        let Some(oneof) = field
            .containing_oneof()
            .filter(|oneof| !oneof.is_synthetic())
        else {
            return Ok(());
        };
        match self.oneofs.entry(oneof.name().to_owned()) {
            Entry::Vacant(slot) => {
                slot.insert((field.name().to_owned(), position));
                Ok(())
            }
            Entry::Occupied(taken) => {
                let (other, at) = taken.get();
                Err(TextFormatError::new(
                    position,
                    format!(
                        "field '{}' conflicts with '{other}' set at {at}: both are in oneof '{}'",
                        field.name(),
                        oneof.name()
                    ),
                ))
            }
        }
    }
}
