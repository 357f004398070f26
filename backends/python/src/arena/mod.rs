//! Shared-memory arenas between the server and one stub process
//! (`docs/design/python-wire.md`, "Arenas").
//!
//! Each arena is an unnamed file in /dev/shm mapped shared in both processes
//! and allocated by its writer only: the server allocates in arena_in
//! ([`InArena`]), the stub in arena_out (read here through [`Arena::view`]).
//! A block is freed by its owner after the reader sends `Release` with its
//! offset. The writer allocates from a pool that starts small and grows
//! ([`ArenaLayout`]).

mod allocator;
mod in_arena;
mod layout;
mod mapping;
#[cfg(test)]
mod tests;

pub use allocator::ALIGN;
pub use in_arena::InArena;
pub use layout::ArenaLayout;
pub use mapping::{Arena, ReleaseHook};
