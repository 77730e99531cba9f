//! Tera itself: one template's text filled in with a point's values, in this process. What runs
//! here has no limit of its own but the caps below; [`super::bounded`] runs it in a worker
//! process that has a memory and a time limit.

use serde::{Deserialize, Serialize};

/// One value a template sees, as it crosses to the worker: a float by its bits, so that the
/// worker's header is byte for byte the one rendered here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) enum Var {
    Int(i64),
    Float(u64),
    Str(String),
}

impl From<&crate::spec::Value> for Var {
    fn from(v: &crate::spec::Value) -> Var {
        match v {
            crate::spec::Value::Int(i) => Var::Int(*i),
            crate::spec::Value::Float(f) => Var::Float(f.to_bits()),
            crate::spec::Value::Str(s) => Var::Str(s.clone()),
        }
    }
}

/// Why Tera refused a template: its chain of messages (joined by `: `) and the last of them, on
/// one line (Tera's own message only says that rendering failed; its reason is at the end).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Refusal {
    pub(super) chain: String,
    pub(super) innermost: String,
}

impl Refusal {
    fn of(e: &tera::Error) -> Refusal {
        let mut chain = vec![e.to_string()];
        let mut last: &dyn std::error::Error = e;
        while let Some(s) = last.source() {
            chain.push(s.to_string());
            last = s;
        }
        Refusal {
            chain: chain.join(": "),
            innermost: last.to_string().replace('\n', " "),
        }
    }
}

/// `text` rendered with `vars` (set in their order: a later one of the same name wins).
pub(super) fn fill(text: &str, vars: &[(String, Var)]) -> Result<String, Refusal> {
    let mut ctx = tera::Context::new();
    for (name, v) in vars {
        match v {
            Var::Int(i) => ctx.insert(name, i),
            Var::Float(bits) => ctx.insert(name, &f64::from_bits(*bits)),
            Var::Str(s) => ctx.insert(name, s),
        }
    }
    render_capped(text, &ctx).map_err(|e| Refusal::of(&e))
}

/// The most text one template may render for one point: a header holds constants, kilobytes;
/// past this a loop ran away, and rendering on would take every byte of memory (SIGABRT).
pub const MAX_RENDERED: usize = 16 << 20;
/// The most values Tera's `range` may give: its values are made up front, and
/// `range(end=100000000)` took 3 GB before the first was rendered.
pub const MAX_RANGE: usize = 1 << 20;

/// `text` rendered with `ctx`, as `Tera::one_off` does, but refused past [`MAX_RENDERED`] bytes,
/// and with a `range` that refuses more than [`MAX_RANGE`] values and a `step_by` of 0 (Tera's
/// own looped for ever, taking memory).
fn render_capped(text: &str, ctx: &tera::Context) -> Result<String, tera::Error> {
    const NAME: &str = "__tera_one_off";
    let mut tera = tera::Tera::default();
    tera.register_function("range", capped_range);
    tera.add_raw_template(NAME, text)?;
    let mut out = Capped(Vec::new());
    tera.render_to(NAME, ctx, &mut out)?;
    String::from_utf8(out.0).map_err(tera::Error::msg)
}

/// A buffer that refuses to grow past [`MAX_RENDERED`] bytes.
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + bytes.len() > MAX_RENDERED {
            return Err(std::io::Error::other(format!(
                "it renders more than {} MiB for one point (hint: a header holds constants; does a loop run away?)",
                MAX_RENDERED >> 20
            )));
        }
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Tera's `range(start=0, end, step_by=1)`, refusing a `step_by` of 0 and more than
/// [`MAX_RANGE`] values.
fn capped_range(
    args: &std::collections::HashMap<String, tera::Value>,
) -> tera::Result<tera::Value> {
    let arg = |name: &str, default: Option<usize>| -> tera::Result<usize> {
        match args.get(name) {
            Some(v) => tera::from_value::<usize>(v.clone()).map_err(|_| {
                tera::Error::msg(format!(
                    "Function `range` received {name}={v} but `{name}` can only be a number"
                ))
            }),
            None => default.ok_or_else(|| {
                tera::Error::msg(format!(
                    "Function `range` was called without a `{name}` argument"
                ))
            }),
        }
    };
    let (start, end, step) = (
        arg("start", Some(0))?,
        arg("end", None)?,
        arg("step_by", Some(1))?,
    );
    if start > end {
        return Err(tera::Error::msg(
            "Function `range` was called with a `start` argument greater than the `end` one",
        ));
    }
    if step == 0 {
        return Err(tera::Error::msg(
            "Function `range` was called with `step_by=0`, which never reaches `end`",
        ));
    }
    let count = (end - start).div_ceil(step);
    if count > MAX_RANGE {
        return Err(tera::Error::msg(format!(
            "Function `range` would give {count} values, more than {MAX_RANGE} (hint: a header holds constants; does a loop run away?)"
        )));
    }
    Ok(tera::to_value((start..end).step_by(step).collect::<Vec<_>>()).unwrap_or(tera::Value::Null))
}
