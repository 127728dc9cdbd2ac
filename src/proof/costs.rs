//! The cost model of seed 001's scenarios (its field names, so one scenario serves both
//! tools): each job is one execution attempt. A selected execution keeps the job's fixed setup,
//! runs the retained share of its selectable time and adds the overhead; an audit runs the
//! whole job plus the overhead and the audit's own. The two are priced separately (each rounded
//! up to the billing quantum) before they are averaged by the audit rate. A saving may be
//! negative and is kept so; an unknown price or usage stays unknown.

use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Scenario {
    pub version: u32,
    pub mode: Mode,
    pub jobs: Vec<Job>,
    pub model_usage: ModelUsage,
}

#[derive(Deserialize, Serialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    /// Selection only observed: every test still runs; only collection overhead is added.
    Shadow,
    /// Selection acts: the retained fraction runs, audits run everything.
    Projection,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Job {
    pub id: String,
    pub baseline_seconds: f64,
    pub selectable_seconds: f64,
    pub retained_fraction: f64,
    pub audit_rate: f64,
    pub overhead_seconds: f64,
    pub audit_overhead_seconds: f64,
    pub drop_empty_job: bool,
    pub usd_per_minute: Option<f64>,
    pub billing_quantum_seconds: Option<f64>,
    pub allocated_vcpus: Option<f64>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModelUsage {
    pub baseline: Usage,
    pub candidate: Usage,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Usage {
    pub input_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    pub input_usd_per_million: Option<f64>,
    pub output_usd_per_million: Option<f64>,
}

/// Baseline, candidate and saving (baseline − candidate) of one measure.
#[derive(Serialize, Debug, PartialEq, Clone, Copy)]
pub(crate) struct Compared {
    pub baseline: Option<f64>,
    pub candidate: Option<f64>,
    pub saving: Option<f64>,
}

impl Compared {
    fn new(baseline: Option<f64>, candidate: Option<f64>) -> Compared {
        let saving = baseline.zip(candidate).map(|(b, c)| b - c);
        Compared {
            baseline,
            candidate,
            saving,
        }
    }

    fn add(self, other: Compared) -> Compared {
        let sum = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a + b);
        Compared::new(
            sum(self.baseline, other.baseline),
            sum(self.candidate, other.candidate),
        )
    }
}

#[derive(Serialize, Debug)]
pub(crate) struct JobCost {
    pub id: String,
    pub runner_seconds: Compared,
    pub vcpu_minutes: Compared,
    pub list_usd: Compared,
}

#[derive(Serialize, Debug)]
pub(crate) struct Report {
    pub version: u32,
    pub mode: Mode,
    pub jobs: Vec<JobCost>,
    pub runner_seconds: Compared,
    pub vcpu_minutes: Compared,
    pub list_usd: Compared,
    pub model_tokens: Compared,
    pub model_usd: Compared,
}

/// A projection scenario from recorded shadow compares, one job per compare: its whole suite's
/// recorded seconds are the baseline, all of them selectable (a job's fixed setup is not
/// recorded, so none is kept: the saving is the runner's, not the job's); the retained
/// fraction is the seconds of what its decision ran; the overhead is gate's own recorded time
/// before the runner started plus its time recording the leg at that commit (each the median
/// of the recorded ones where a compare has none; no recording at all: none);
/// prices and vCPUs unknown; no model tokens on either side (gate calls no model: a measured
/// zero). `audit_rate` is the configured one.
pub(crate) fn from_compares(
    compares: &[crate::proof::evaluate::Compare],
    audit_rate: f64,
) -> Scenario {
    let median = |known: fn(&crate::proof::evaluate::Compare) -> Option<u64>| {
        let mut known: Vec<u64> = compares.iter().filter_map(known).collect();
        known.sort_unstable();
        known.get(known.len() / 2).copied().unwrap_or(0)
    };
    let (select, record) = (median(|c| c.select_ms), median(|c| c.record_ms));
    let jobs = compares
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let total: u64 = c.durations.values().sum();
            let ran = c.ran();
            let kept: u64 = c
                .durations
                .iter()
                .filter(|(u, _)| ran.contains(u))
                .map(|(_, ms)| ms)
                .sum();
            Job {
                id: format!("{i}:{}", c.commit.get(..12).unwrap_or(&c.commit)),
                baseline_seconds: total as f64 / 1000.0,
                selectable_seconds: total as f64 / 1000.0,
                retained_fraction: if total == 0 {
                    1.0
                } else {
                    kept as f64 / total as f64
                },
                audit_rate,
                overhead_seconds: (c.select_ms.unwrap_or(select) + c.record_ms.unwrap_or(record))
                    as f64
                    / 1000.0,
                audit_overhead_seconds: 0.0,
                drop_empty_job: false,
                usd_per_minute: None,
                billing_quantum_seconds: None,
                allocated_vcpus: None,
            }
        })
        .collect();
    let none = || Usage {
        input_tokens: Some(0.0),
        output_tokens: Some(0.0),
        input_usd_per_million: Some(0.0),
        output_usd_per_million: Some(0.0),
    };
    Scenario {
        version: 1,
        mode: Mode::Projection,
        jobs,
        model_usage: ModelUsage {
            baseline: none(),
            candidate: none(),
        },
    }
}

/// What is wrong with a scenario, naming the field.
pub(crate) fn check(s: &Scenario) -> Result<(), String> {
    if s.version != 1 {
        return Err(format!(
            "version: {} is not a scenario version this gate reads (1)",
            s.version
        ));
    }
    let mut ids = std::collections::BTreeSet::new();
    for (i, j) in s.jobs.iter().enumerate() {
        let at = |field: &str| format!("jobs[{i}].{field}");
        if !ids.insert(j.id.as_str()) {
            return Err(format!("{}: `{}` is not unique", at("id"), j.id));
        }
        for (field, v) in [
            ("retainedFraction", j.retained_fraction),
            ("auditRate", j.audit_rate),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{}: {v} is not a fraction from 0 to 1", at(field)));
            }
        }
        let seconds = [
            ("baselineSeconds", Some(j.baseline_seconds)),
            ("selectableSeconds", Some(j.selectable_seconds)),
            ("overheadSeconds", Some(j.overhead_seconds)),
            ("auditOverheadSeconds", Some(j.audit_overhead_seconds)),
            ("usdPerMinute", j.usd_per_minute),
            ("billingQuantumSeconds", j.billing_quantum_seconds),
            ("allocatedVcpus", j.allocated_vcpus),
        ];
        for (field, v) in seconds {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(format!("{}: {v} is not a non-negative number", at(field)));
            }
        }
        if j.selectable_seconds > j.baseline_seconds {
            return Err(format!(
                "{}: {} is more than baselineSeconds {}",
                at("selectableSeconds"),
                j.selectable_seconds,
                j.baseline_seconds
            ));
        }
    }
    Ok(())
}

/// Seconds billed for an execution of `seconds`: rounded up to the quantum.
fn billed(seconds: f64, quantum: Option<f64>) -> f64 {
    match quantum {
        Some(q) if q > 0.0 => (seconds / q).ceil() * q,
        _ => seconds,
    }
}

fn job(j: &Job, mode: Mode) -> JobCost {
    let fixed = j.baseline_seconds - j.selectable_seconds;
    let audit = j.baseline_seconds + j.overhead_seconds + j.audit_overhead_seconds;
    let selected = match mode {
        // Every test still runs: the shadow adds only its collection overhead.
        Mode::Shadow => j.baseline_seconds + j.overhead_seconds,
        // Nothing selected and the job may go: its fixed setup goes with it.
        Mode::Projection if j.drop_empty_job && j.retained_fraction == 0.0 => j.overhead_seconds,
        Mode::Projection => fixed + j.selectable_seconds * j.retained_fraction + j.overhead_seconds,
    };
    let a = j.audit_rate;
    let mean = |x: f64, y: f64| (1.0 - a) * x + a * y;
    let runner = Compared::new(Some(j.baseline_seconds), Some(mean(selected, audit)));
    let vcpu = |s: f64| j.allocated_vcpus.map(|v| s / 60.0 * v);
    let vcpu_minutes = Compared::new(
        vcpu(j.baseline_seconds),
        vcpu(selected).zip(vcpu(audit)).map(|(x, y)| mean(x, y)),
    );
    let price = |s: f64| {
        j.usd_per_minute
            .map(|p| billed(s, j.billing_quantum_seconds) / 60.0 * p)
    };
    let list_usd = Compared::new(
        price(j.baseline_seconds),
        price(selected).zip(price(audit)).map(|(x, y)| mean(x, y)),
    );
    JobCost {
        id: j.id.clone(),
        runner_seconds: runner,
        vcpu_minutes,
        list_usd,
    }
}

fn usage(u: &Usage) -> (Option<f64>, Option<f64>) {
    let tokens = u.input_tokens.zip(u.output_tokens).map(|(i, o)| i + o);
    let usd = match (
        u.input_tokens,
        u.output_tokens,
        u.input_usd_per_million,
        u.output_usd_per_million,
    ) {
        (Some(i), Some(o), Some(pi), Some(po)) => Some(i / 1e6 * pi + o / 1e6 * po),
        _ => None,
    };
    (tokens, usd)
}

/// The scenario's costs, job by job and in total.
pub(crate) fn costs(s: &Scenario) -> Report {
    let jobs: Vec<JobCost> = s.jobs.iter().map(|j| job(j, s.mode)).collect();
    let zero = Compared::new(Some(0.0), Some(0.0));
    let total = |f: fn(&JobCost) -> Compared| jobs.iter().map(f).fold(zero, Compared::add);
    let (bt, bu) = usage(&s.model_usage.baseline);
    let (ct, cu) = usage(&s.model_usage.candidate);
    Report {
        version: 1,
        mode: s.mode,
        runner_seconds: total(|j| j.runner_seconds),
        vcpu_minutes: total(|j| j.vcpu_minutes),
        list_usd: total(|j| j.list_usd),
        model_tokens: Compared::new(bt, ct),
        model_usd: Compared::new(bu, cu),
        jobs,
    }
}

/// The report as a Markdown table.
pub(crate) fn markdown(r: &Report) -> String {
    let n = |v: Option<f64>, unit: &str| {
        v.map_or_else(|| "unknown".to_string(), |v| format!("{v:.2}{unit}"))
    };
    let mut out = format!(
        "| measure ({:?}) | baseline | candidate | saving |\n|---|---|---|---|\n",
        r.mode
    )
    .to_lowercase();
    for (name, c, unit) in [
        ("runner seconds", r.runner_seconds, " s"),
        ("vCPU-minutes", r.vcpu_minutes, ""),
        ("runner list cost", r.list_usd, " USD"),
        ("model tokens", r.model_tokens, ""),
        ("model list cost", r.model_usd, " USD"),
    ] {
        out.push_str(&format!(
            "| {name} | {} | {} | {} |\n",
            n(c.baseline, unit),
            n(c.candidate, unit),
            n(c.saving, unit)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(mode: &str, jobs: serde_json::Value) -> Scenario {
        serde_json::from_value(serde_json::json!({
            "version": 1,
            "mode": mode,
            "jobs": jobs,
            "modelUsage": {
                "baseline": {"inputTokens": 0, "outputTokens": 0, "inputUsdPerMillion": 0, "outputUsdPerMillion": 0},
                "candidate": {"inputTokens": 1000000, "outputTokens": 100000, "inputUsdPerMillion": 3, "outputUsdPerMillion": 15}
            }
        }))
        .unwrap()
    }

    fn close(a: Option<f64>, b: f64) {
        let a = a.unwrap();
        assert!((a - b).abs() < 1e-9, "{a} ≠ {b}");
    }

    /// Worked by hand. Job `unit`: 600 s, 500 selectable, 20% retained, audits 10%, 15 s
    /// overhead, 30 s more on an audit, $0.008/min billed per minute, 2 vCPUs.
    /// Selected: 100 fixed + 100 retained + 15 = 215 s (billed 240 s = 4 min = $0.032);
    /// audit: 600 + 15 + 30 = 645 s (billed 660 s = 11 min = $0.088).
    /// Candidate seconds: 0.9 × 215 + 0.1 × 645 = 258; saving 600 − 258 = 342.
    /// Candidate cost: 0.9 × 0.032 + 0.1 × 0.088 = 0.0376 against 10 × 0.008 = 0.08.
    /// vCPU-minutes: 600/60 × 2 = 20 against 0.9 × 7.1667 + 0.1 × 21.5 = 8.6.
    #[test]
    fn a_worked_example() {
        let s = scenario(
            "projection",
            serde_json::json!([{
                "id": "unit", "baselineSeconds": 600, "selectableSeconds": 500,
                "retainedFraction": 0.2, "auditRate": 0.1, "overheadSeconds": 15,
                "auditOverheadSeconds": 30, "dropEmptyJob": false, "usdPerMinute": 0.008,
                "billingQuantumSeconds": 60, "allocatedVcpus": 2
            }]),
        );
        check(&s).unwrap();
        let r = costs(&s);
        close(r.runner_seconds.candidate, 258.0);
        close(r.runner_seconds.saving, 342.0);
        close(r.list_usd.baseline, 0.08);
        close(r.list_usd.candidate, 0.0376);
        close(r.vcpu_minutes.baseline, 20.0);
        close(
            r.vcpu_minutes.candidate,
            0.9 * (215.0 / 60.0 * 2.0) + 0.1 * 21.5,
        );
        // The hosted model costs what it costs: 1 M in at $3, 100 k out at $15 = $4.5.
        close(r.model_usd.candidate, 4.5);
        close(r.model_usd.saving, -4.5);
        close(r.model_tokens.saving, -1_100_000.0);
    }

    /// Shadow mode keeps every test: the overhead is all it adds, so the saving is negative.
    /// 300 s job, 20 s overhead, no audits: candidate 320 s, saving −20 s; billed per 60 s:
    /// 300 → $0.05 (5 min at $0.01), 320 → 360 s → $0.06, saving −$0.01. No vCPU count:
    /// unknown, never zero.
    #[test]
    fn a_shadow_costs_its_overhead() {
        let s = scenario(
            "shadow",
            serde_json::json!([{
                "id": "lint", "baselineSeconds": 300, "selectableSeconds": 200,
                "retainedFraction": 0.1, "auditRate": 0, "overheadSeconds": 20,
                "auditOverheadSeconds": 0, "dropEmptyJob": true, "usdPerMinute": 0.01,
                "billingQuantumSeconds": 60, "allocatedVcpus": null
            }]),
        );
        let r = costs(&s);
        close(r.runner_seconds.saving, -20.0);
        close(r.list_usd.saving, -0.01);
        assert_eq!(r.vcpu_minutes.candidate, None);
        assert!(markdown(&r).contains("| runner seconds | 300.00 s | 320.00 s | -20.00 s |"));
    }

    #[test]
    fn an_empty_selection_may_drop_the_job() {
        let job = |drop: bool| {
            serde_json::json!([{
                "id": "j", "baselineSeconds": 100, "selectableSeconds": 60,
                "retainedFraction": 0, "auditRate": 0, "overheadSeconds": 5,
                "auditOverheadSeconds": 0, "dropEmptyJob": drop, "usdPerMinute": null,
                "billingQuantumSeconds": null, "allocatedVcpus": null
            }])
        };
        close(
            costs(&scenario("projection", job(true)))
                .runner_seconds
                .candidate,
            5.0,
        );
        close(
            costs(&scenario("projection", job(false)))
                .runner_seconds
                .candidate,
            45.0,
        );
    }

    /// Three recorded compares, worked by hand. Inventory a, b, c (4 s, 1 s, 5 s: 10 s).
    /// 1: selected a, select 200 ms, recorded in 50 ms → retained 0.4, overhead 0.25 s.
    /// 2: selected b with a reused, select unknown → the median of 200 and 400 (the upper:
    ///    400), recording unknown → the median of 50 and 30 (50): retained 0.1, overhead 0.45 s.
    /// 3: a whole-suite verdict, c reused, select 400 ms, recorded in 30 ms: retained 0.5
    ///    (a and b ran), overhead 0.43 s.
    #[test]
    fn a_scenario_from_recorded_compares() {
        let set = |units: &[&str]| units.iter().map(|u| (*u).to_string()).collect();
        let compare = |selected: &[&str], reused: &[&str], everything, select, record| {
            crate::proof::evaluate::Compare {
                commit: "0123456789abcdef".into(),
                ran_everything: everything,
                inventory: set(&["a", "b", "c"]),
                selected: set(selected),
                reused: set(reused),
                judged: Vec::new(),
                durations: [("a", 4000), ("b", 1000), ("c", 5000)]
                    .into_iter()
                    .map(|(u, ms)| (u.to_string(), ms))
                    .collect(),
                select_ms: select,
                record_ms: record,
                traced_only: Vec::new(),
            }
        };
        let s = from_compares(
            &[
                compare(&["a"], &[], false, Some(200), Some(50)),
                compare(&["a", "b"], &["a"], false, None, None),
                compare(&[], &["c"], true, Some(400), Some(30)),
            ],
            0.25,
        );
        check(&s).unwrap();
        let got: Vec<(f64, f64, f64)> = s
            .jobs
            .iter()
            .map(|j| (j.baseline_seconds, j.retained_fraction, j.overhead_seconds))
            .collect();
        let want = [(10.0, 0.4, 0.25), (10.0, 0.1, 0.45), (10.0, 0.5, 0.43)];
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g.0 - w.0).abs() < 1e-9 && (g.1 - w.1).abs() < 1e-9 && (g.2 - w.2).abs() < 1e-9,
                "{got:?}"
            );
        }
        assert!(
            s.jobs
                .iter()
                .all(|j| j.audit_rate == 0.25 && j.usd_per_minute.is_none())
        );
        assert_eq!(s.jobs[0].id, "0:0123456789ab");
    }

    #[test]
    fn a_bad_field_is_named() {
        let s = scenario(
            "projection",
            serde_json::json!([{
                "id": "j", "baselineSeconds": 100, "selectableSeconds": 160,
                "retainedFraction": 0.5, "auditRate": 0, "overheadSeconds": 5,
                "auditOverheadSeconds": 0, "dropEmptyJob": false, "usdPerMinute": null,
                "billingQuantumSeconds": null, "allocatedVcpus": null
            }]),
        );
        assert_eq!(
            check(&s).unwrap_err(),
            "jobs[0].selectableSeconds: 160 is more than baselineSeconds 100"
        );
    }
}
