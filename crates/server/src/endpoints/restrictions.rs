//! The restricted API flags (`--http-restricted-api`,
//! `--grpc-restricted-protocol`) as the core's [`Restrictions`].

use oxiserve_core::Restrictions;

use crate::cli::values::RestrictedApi;

/// The restrictions `flags` set; `header` names the header a flag's key
/// stands for on the endpoint (their API names were checked when parsed).
pub(super) fn restrictions(flags: &[RestrictedApi], header: fn(&str) -> String) -> Restrictions {
    let mut restrictions = Restrictions::default();
    for flag in flags {
        for category in flag.categories() {
            restrictions.restrict(category, &header(&flag.header), &flag.value);
        }
    }
    restrictions
}
