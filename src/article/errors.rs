//! ARTICLE's errors: its own, declared here, and those every command
//! or several families share (`common/errors.rs`), re-exported, so that the
//! family names each as `errors::NAME`.

#![forbid(unsafe_code)]

pub use crate::common::errors::*;

pub const SLUG_TAKEN: ErrorText = entry(
    "SLUGTAKEN slug '{slug}' belongs to another article",
    "`ARTICLE.CREATE`, `ARTICLE.SETSLUG`",
);
pub const INVALID_SLUG: ErrorText = entry(
    "BADSLUG invalid slug: use 1 to {most} Unicode letters, digits, '-' or '_'",
    "`ARTICLE.CREATE`, `ARTICLE.SETSLUG` (`most`: `recipes.article-slug-max-chars`), `ARTICLE.BYSLUG` (4096)",
);
pub const SLUG_INDEX_KEY: ErrorText = entry(
    "ERR the slug index must be another key than the article",
    "`ARTICLE.*` with a slug index",
);

/// ARTICLE's own errors, in the order the manual lists them.
pub const OWN: &[&ErrorText] = &[&SLUG_TAKEN, &INVALID_SLUG, &SLUG_INDEX_KEY];
