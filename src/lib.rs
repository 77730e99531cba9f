//! `sweep`: parameter sweeps of CUDA microbenchmarks, and what the curves mean.
//!
//! The data flows one way:
//! spec -> points -> render -> compile -> run -> parse -> store -> analyze -> report.
//! `driver` is the only module that knows that order.

pub mod analyze;
pub mod cache;
pub mod compare;
pub mod compile;
pub mod driver;
pub mod events;
pub mod exec;
pub mod exit;
pub mod export;
pub mod files;
pub mod gpu;
pub mod merge;
pub mod overrides;
pub mod owner;
pub mod parse;
pub mod points;
pub mod profile;
pub mod project;
pub mod render;
pub mod report;
pub mod run;
pub mod schema;
pub mod slurm;
pub mod spec;
pub mod store;
pub mod units;
pub mod words;
