//! Content as people write it (`crates/fencepost-site/src/content/`): what is read, what is refused with file, line and
//! key, and what one bad file may never do to the others.
mod as_written;
mod bad_input;
mod bundles;
mod files;
