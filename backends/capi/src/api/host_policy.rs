//! The `..ForHostPolicy` and `..WithHostPolicy` twins of functions that
//! hand over a tensor's memory: the same function with a host policy's
//! name among its parameters. The name changes nothing here: such memory
//! is the CPU's, whatever the policy.

/// Exports the C function written inside and its twin `$twin`, which takes
/// the parameter in brackets (the host policy's name, where Triton's header
/// puts it) as well and does the same.
macro_rules! with_host_policy_twin {
    (
        $(#[$attr:meta])*
        fn $name:ident, $twin:ident(
            $($before:ident: $before_ty:ty,)*
            [$policy:ident: $policy_ty:ty]
            $(, $after:ident: $after_ty:ty)* $(,)?
        ) $body:block
    ) => {
        $(#[$attr])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(
            $($before: $before_ty,)* $($after: $after_ty),*
        ) -> *mut $crate::error::ErrorHandle $body

        #[doc = concat!("`", stringify!($twin), "`: `", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $twin(
            $($before: $before_ty,)* $policy: $policy_ty $(, $after: $after_ty)*
        ) -> *mut $crate::error::ErrorHandle {
            $name($($before,)* $($after),*)
        }
    };
}
