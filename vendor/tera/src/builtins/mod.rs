pub mod filters;
pub mod functions;
pub mod testers;
