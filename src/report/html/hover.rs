//! Values on hover: each chart's points as JSON in the page, and an inline script that shows the
//! nearest point's x, value with its unit, ± uncertainty and status in a tooltip beside the
//! pointer, with a ring on the point. The script finds a point's pixel from the frame each chart's
//! SVG carries on its root element (`data-frame`, `data-x`, `data-y`, `data-y-scale`,
//! `data-y-unit`, written by `canvas`); a chart without a frame (bars) gets no tooltip. Nothing
//! is fetched, and the page without script is the same, less the tooltip.

use super::Figure;
use crate::analyze::Analysis;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The id of the JSON element: `{chart id: {x, series: [{name, unit, points: [[x, value,
/// relative ±, status], ...]}]}}`, values in the CSV's unit; a marked point's status is its
/// cause in the terminal's words (`placement`, `processes`, `noisy`).
pub(super) const DATA_ID: &str = "sweep-points";

/// Appends the points of every chart with series and the script that reads them.
pub(super) fn script(h: &mut String, views: &[Analysis], figures: &[Figure]) {
    let infos: Vec<Vec<Vec<crate::report::PointInfo>>> =
        views.iter().map(crate::report::point_info).collect();
    let mut charts = serde_json::Map::new();
    for f in figures
        .iter()
        .filter(|f| f.svg.is_ok() && !f.series.is_empty())
    {
        let series: Vec<Value> = f
            .series
            .iter()
            .filter_map(|&(v, i)| {
                let a = views.get(v)?;
                let s = a.series.get(i)?;
                let info: HashMap<u64, &crate::report::PointInfo> =
                    infos[v][i].iter().map(|p| (p.x.to_bits(), p)).collect();
                let points: Vec<Value> = s
                    .data
                    .iter()
                    .filter_map(|&(x, y)| {
                        let y = y.filter(|y| y.is_finite())?;
                        let p = info.get(&x.to_bits());
                        Some(json!([
                            x,
                            y,
                            p.map_or(0.0, |p| p.u),
                            p.map_or("", |p| p.mark.map_or(p.status.as_str(), |m| m.word()))
                        ]))
                    })
                    .collect();
                Some(json!({"name": s.name, "unit": s.unit, "points": points}))
            })
            .collect();
        let x = views.get(f.series[0].0).map_or("", |a| a.x.as_str());
        charts.insert(f.id.clone(), json!({"x": x, "series": series}));
    }
    if charts.is_empty() {
        return;
    }
    // No `<` at all: `</` would end the script element early, and `<!--<script>` (an axis value)
    // put the parser in a state where the closing tag ends nothing, so the tooltip's script and
    // the rest of the page became this element's text. `<` only occurs inside JSON strings,
    // where `\u003c` is the same character.
    let data = Value::Object(charts).to_string().replace('<', "\\u003c");
    h.push_str(&format!(
        "<script type=\"application/json\" id=\"{DATA_ID}\">{data}</script>\n<script>{SCRIPT}</script>\n"
    ));
}

/// The tooltip's script: plain ES5 for any browser, no library.
const SCRIPT: &str = r#"
(function () {
  'use strict';
  var el = document.getElementById('sweep-points');
  if (!el) return;
  var charts = JSON.parse(el.textContent);
  var words = {placement: 'varies with buffer placement', processes: 'differs between processes', noisy: 'noisy (confidence target missed)'};
  function num(v) {
    if (!isFinite(v)) return '-';
    var a = Math.abs(v);
    return a >= 1e4 ? String(Math.round(v)) : String(Number(v.toPrecision(4)));
  }
  function two(v) { return Math.abs(v) >= 100 ? String(Math.round(v)) : v.toPrecision(2); }
  Object.keys(charts).forEach(function (id) {
    var fig = document.getElementById(id);
    var svg = fig && fig.querySelector('svg');
    if (!svg || !svg.getAttribute('data-frame')) return;
    var d = charts[id];
    var fr = svg.getAttribute('data-frame').split(' ').map(Number);
    var xs = svg.getAttribute('data-x').split(' ');
    var ys = svg.getAttribute('data-y').split(' ').map(Number);
    var k = Number(svg.getAttribute('data-y-scale') || 1);
    var unit = svg.getAttribute('data-y-unit') || '';
    var x0 = Number(xs[0]), x1 = Number(xs[1]), log = xs[2] === 'log2';
    function px(x) {
      var t = log ? (Math.log2(x) - Math.log2(x0)) / (Math.log2(x1) - Math.log2(x0))
                  : (x - x0) / (x1 - x0);
      return fr[0] + t * (fr[2] - fr[0]);
    }
    function py(v) { return fr[3] - (v * k - ys[0]) / (ys[1] - ys[0]) * (fr[3] - fr[1]); }
    var pts = [];
    d.series.forEach(function (s) {
      s.points.forEach(function (p) { pts.push({s: s, p: p, X: px(p[0]), Y: py(p[1])}); });
    });
    var tip = document.createElement('div');
    tip.className = 'tip';
    tip.setAttribute('role', 'status');
    tip.style.display = 'none';
    fig.appendChild(tip);
    var ring = document.createElementNS('http://www.w3.org/2000/svg', 'circle');
    ring.setAttribute('class', 'hover-mark');
    ring.setAttribute('r', '6');
    ring.style.display = 'none';
    svg.appendChild(ring);
    function hide() { tip.style.display = 'none'; ring.style.display = 'none'; }
    svg.addEventListener('mouseleave', hide);
    svg.addEventListener('mousemove', function (e) {
      var r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
      var sx = vb.width / r.width, sy = vb.height / r.height;
      var mx = (e.clientX - r.left) * sx + vb.x, my = (e.clientY - r.top) * sy + vb.y;
      if (mx < fr[0] - 10 || mx > fr[2] + 10 || my < fr[1] - 10 || my > fr[3] + 10) return hide();
      var best = null, bd = Infinity;
      pts.forEach(function (q) {
        var dd = (q.X - mx) * (q.X - mx) + (q.Y - my) * (q.Y - my);
        if (dd < bd) { bd = dd; best = q; }
      });
      if (!best) return hide();
      var p = best.p, v = p[1] * k;
      var text = d.x + ' = ' + num(p[0]) + ': ' + num(v);
      if (p[2] > 0) text += ' ± ' + two(Math.abs(v) * p[2]) + ' ' + unit + ' (± ' + two(100 * p[2]) + ' %)';
      else text += ' ' + unit;
      if (p[3]) text += ', ' + (words[p[3]] || p[3]);
      if (d.series.length > 1) text = best.s.name + ': ' + text;
      tip.textContent = text;
      tip.style.display = 'block';
      ring.setAttribute('cx', best.X);
      ring.setAttribute('cy', best.Y);
      ring.style.display = '';
      // Beside the point, above it (below near the top), kept within the figure.
      var fb = fig.getBoundingClientRect();
      var qx = r.left - fb.left + (best.X - vb.x) / sx, qy = r.top - fb.top + (best.Y - vb.y) / sy;
      var left = qx + 12, top = qy - tip.offsetHeight - 10;
      if (left + tip.offsetWidth > fb.width) left = qx - tip.offsetWidth - 12;
      if (top < 0) top = qy + 12;
      tip.style.left = Math.max(0, left) + 'px';
      tip.style.top = top + 'px';
    });
  });
})();
"#;
