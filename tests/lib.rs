//! The integration tests: one test binary (`cargo test --test integration`), one module per
//! subject, and the helpers they share in `common` (as just's tests/lib.rs). One binary links
//! `sweep`'s dev-dependencies once instead of once per file, and a helper that no test uses is a
//! dead-code warning again. Run one subject with its module path, e.g.
//! `cargo test --test integration h100_fixtures::`.

mod common;

mod architecture;
mod bench_checks;
mod chart_order;
mod cli;
mod driver_faults;
mod export;
mod figures;
mod gpus;
mod h100_fixtures;
mod h200x2_fixtures;
mod hardening;
mod hardening_leftovers;
mod hardening_lows;
mod hardening_lows7;
mod hardening_review10a;
mod hardening_review10b;
mod hardening_review11a;
mod hardening_review11b;
mod hardening_review12;
mod hardening_review13;
mod hardening_review16;
mod hardening_review16b;
mod hardening_review17;
mod hardening_review18;
mod hardening_review19;
mod hardening_review21;
mod hardening_review7;
mod hardening_review8;
mod hardening_review9a;
mod hardening_review9b;
mod nvcc;
mod read_scale;
mod render_limits;
mod report;
mod resume;
mod slurm;
mod snapshots;
mod spreadsheets;
mod terminal;
mod timing_stats;
