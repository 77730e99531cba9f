//! The top of the page: the findings (a line per series, linked to its chart) and the contents.

use super::{failed_rows, no_break, Figure, Run, Views};
use crate::analyze::reading::{human, human_x};
use crate::events::marks::{count, series_sentence, Tally};
use crate::report::escape;
use std::fmt::Write as _;

/// The findings, first on the page: a line per series with a curve (its period, knee and best,
/// in the unit its chart uses, and its marked values), linked to its chart; the failed points, if
/// any.
pub(super) fn findings(
    h: &mut String,
    views: &Views,
    figures: &[Figure],
    run: &Run,
    tally: &Tally,
) {
    h.push_str("<section id=\"findings\">\n<h2>Findings</h2>\n<ul>\n");
    // First the points measured and the values marked, per cause, as the terminal's summary says
    // them (unlinked: every link of the findings goes to a chart; Progress has them per metric).
    if tally.values > 0 {
        let failed = failed_rows(run).len();
        let _ = writeln!(
            h,
            "<li>{} {} measured, {} failed; {}</li>",
            count(run.results.rows.len() - failed),
            crate::words::noun_for(run.results.rows.len() - failed, "point"),
            count(failed),
            escape(&tally.clauses().join("; "))
        );
    }
    let labels = crate::spec::Labels::from_text(&run.manifest.spec);
    for (v, analysis) in views.analyses().iter().enumerate() {
        for (i, s) in analysis.series.iter().enumerate() {
            let Some(f) = figures.iter().find(|f| f.series.contains(&(v, i))) else {
                continue;
            };
            // In the spec's words, as its chart is titled (`Shared-memory stores, full grid: no
            // conflict`, `every thread [block layout: dense]`); the series' name in the CSV's
            // columns (`global_all_grid_mflops [layout=dense]`) shows on hover. Then its marked
            // values in the terminal's words (`264 of 512 values vary with buffer placement, up
            // to 69 %`), so that the reader sees which series are clean.
            let marked = series_sentence(s, tally).map_or(String::new(), |m| format!("; {m}"));
            let _ = writeln!(
                h,
                "<li><a href=\"#{}\" title=\"{}\">{}</a>: {}{}</li>",
                f.id,
                escape(&s.name),
                escape(&in_words(&labels, s)),
                escape(&finding(s, &analysis.x)),
                no_break(&escape(&marked))
            );
        }
    }
    for (f, span) in figures.iter().filter_map(|f| Some((f, f.span.as_ref()?))) {
        let _ = writeln!(
            h,
            "<li><a href=\"#{}\">{}</a>: {}</li>",
            f.id,
            escape(&f.caption),
            escape(span)
        );
    }
    if let Views::Nothing(why) = views {
        let _ = writeln!(
            h,
            "<li>No curve analysis: {}</li>",
            escape(&why.to_string())
        );
    }
    let failed = failed_rows(run).len();
    if failed > 0 {
        let _ = writeln!(
            h,
            "<li><a href=\"#progress\">{failed} point{} failed</a>: their reasons and logs are under Progress</li>",
            if failed == 1 { "" } else { "s" }
        );
    }
    h.push_str("</ul>\n</section>\n");
}

/// A series in the spec's words, as its chart's title names it without its x: `Shared-memory
/// stores, full grid: no conflict`, `every thread [block layout: dense]`.
pub(super) fn in_words(labels: &crate::spec::Labels, s: &crate::analyze::SeriesAnalysis) -> String {
    crate::report::series::series_in_words(labels, &s.metric, &s.group)
}

/// A series' reading in one line: `period 128 (high confidence), period 32 nested (medium
/// confidence), knee 128, best 143.6 GFLOP/s at threads = 512`, its value with four digits
/// (`15.60 TFLOP/s`).
pub(super) fn finding(s: &crate::analyze::SeriesAnalysis, x_name: &str) -> String {
    // A setting or a count the sweep never moved: its value, not "no period".
    if let Some(same) = crate::analyze::reading::constant(x_name, &s.unit, &s.data) {
        return same;
    }
    let c = &s.curve;
    let mut parts = vec![match &c.period {
        Some(p) => format!(
            "period {} ({} confidence)",
            human(p.period),
            p.level.as_str()
        ),
        None => "no period".to_string(),
    }];
    // The period nested in it, as the chart's subtitle and brackets show it.
    if let (Some(_), Some(q)) = (&c.period, &c.secondary) {
        parts.push(format!(
            "period {} nested ({} confidence)",
            human(q.period),
            q.level.as_str()
        ));
    }
    if let Some(k) = c.knee {
        parts.push(format!("knee {}", human(k)));
    }
    if let Some(b) = &c.best {
        // Four digits, as the analysis and the terminal write values (15.60 TFLOP/s, not 15.6).
        // Where the curve first comes within 1 % of it, as its chart says: many x may tie (a
        // saw's later peaks), which is not to say every x past it does.
        let within = if b.x_within_1pct == b.x {
            String::new()
        } else {
            format!(" (within 1 % already at {})", human_x(b.x_within_1pct))
        };
        parts.push(format!(
            "best {} at {x_name} = {}{within}",
            crate::units::format_value(b.value, &s.unit),
            human_x(b.x)
        ));
    }
    parts.join(", ")
}

/// The contents: every section in the page's order (`sections`: anchor and name), the charts by
/// name under theirs.
pub(super) fn contents(h: &mut String, figures: &[Figure], sections: &[(&str, &str)]) {
    h.push_str("<nav id=\"contents\"><h2>Contents</h2>\n<ol>\n");
    for (id, name) in sections {
        let _ = write!(h, "<li><a href=\"#{id}\">{name}</a>");
        if *id == "charts" && !figures.is_empty() {
            h.push_str("<ol>");
            for f in figures {
                let _ = write!(
                    h,
                    "<li><a href=\"#{}\">{}</a></li>",
                    f.id,
                    escape(&f.caption)
                );
            }
            h.push_str("</ol>");
        }
        h.push_str("</li>\n");
    }
    h.push_str("</ol></nav>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_is_named_in_the_spec_s_words_as_its_chart_is() {
        let spec = "[[axis]]\nname = \"layout\"\nlabel = \"block layout\"\nvalues = [\"dense\"]\n\
                    [[metric]]\nname = \"mflops\"\nlabel = \"every thread\"\n";
        let labels = crate::spec::Labels::from_text(spec);
        let mut s = crate::report::series::tests::series();
        s.group = vec![("layout".into(), "dense".into())];
        assert_eq!(in_words(&labels, &s), "every thread [block layout: dense]");
        // Without labels, the names the CSV has.
        let plain = crate::spec::Labels::default();
        assert_eq!(in_words(&plain, &s), "mflops [layout: dense]");
    }

    #[test]
    fn a_finding_says_period_knee_and_best_in_the_charts_unit() {
        let s = crate::report::series::tests::series();
        let line = finding(&s, "threads");
        assert!(line.starts_with("period 32 ("), "{line}");
        assert!(!line.contains("nested"), "{line}");
        // A nested period is a finding too, with its own confidence.
        let mut nested = s.clone();
        let mut q = s.curve.period.clone().unwrap();
        q.period = 64.0;
        q.level = crate::analyze::curve::Confidence::Medium;
        nested.curve.secondary = Some(q);
        let line = finding(&nested, "threads");
        assert!(
            line.contains(" confidence), period 64 nested (medium confidence), knee "),
            "{line}"
        );
        // 3200 MFlops, first reached at 64 threads.
        assert!(
            line.ends_with(", best 3.200 GFLOP/s at threads = 64"),
            "{line}"
        );
    }

    #[test]
    fn a_finding_says_where_the_best_is_tied_and_a_flat_series_its_value() {
        let mut s = crate::report::series::tests::series();
        if let Some(b) = s.curve.best.as_mut() {
            b.x_within_1pct = 32.0;
        }
        let line = finding(&s, "threads");
        assert!(
            line.ends_with(", best 3.200 GFLOP/s at threads = 64 (within 1 % already at 32)"),
            "{line}"
        );
        // A size the sweep never moves (`pitch_bytes` over `rows`): its value, not "no period".
        s.unit = "bytes".into();
        for p in s.data.iter_mut().filter(|p| p.1.is_some()) {
            p.1 = Some(480.0);
        }
        let n = s.data.iter().filter(|p| p.1.is_some()).count();
        assert_eq!(
            finding(&s, "rows"),
            format!("the same at all {n} points along rows: 480 bytes")
        );
    }
}
