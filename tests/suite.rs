//! The integration tests, one binary (the tests of each file a module of
//! it): one link of the crate rather than one a file, and the files' tests
//! run side by side, so that no file's longest test leaves a core idle
//! (`cargo test`'s time on 2 cores, README). Four files stay binaries of
//! their own (Cargo.toml): `fairness.rs` measures the bots' thinking time
//! and wants no other test beside it; `cgroup_v2.rs`, `referee_bots.rs` and
//! `bots_check.rs` are built on their own for the cgroup v2 machine
//! (scripts/cgroup2-vm-test.sh). A new test file is a new `mod` here.

mod common;

mod alphabeta_bot;
mod analyse_cli;
mod analysis_view;
mod filo_solve;
mod host_limits;
mod import_cycles;
mod ladder_analysis;
mod ladder_api;
mod ladder_browse;
mod ladder_client;
mod ladder_events;
mod ladder_forfeits;
mod ladder_hostile;
mod ladder_owners;
mod ladder_pages;
mod ladder_prune;
mod ladder_public;
mod ladder_serve;
mod ladder_stderr;
mod ladder_store;
mod ladder_tests;
mod ladder_workers;
mod league_knockout;
mod league_run;
mod league_swiss;
mod long_functions;
mod match_cli;
mod module_maps;
mod new_user;
mod openings_book;
mod rate_cli;
mod report_hostile;
mod report_html;
mod report_view;
mod sandbox_attacks;
mod sprt_cli;
mod state_cli;
mod templates;
mod user_errors;
