//! `sweep merge`: joins the CSVs of shard runs into one. (Issue 6; not written yet.)
