//! The trace files: `openb_node_list_*.csv` (`sn,cpu_milli,memory_mib,gpu,model`) and
//! `openb_pod_list_*.csv` (`name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,…]`).
//! Columns are found by header name, so the five-column `multigpu*` files read too.

use std::fmt;

/// A GPU node of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRow {
    /// `sn`.
    pub name: String,
    /// `cpu_milli`.
    pub cpu_milli: u64,
    /// `memory_mib`.
    pub memory_mib: u64,
    /// `gpu`: physical GPUs.
    pub gpus: u32,
    /// `model` (empty for CPU-only nodes).
    pub model: String,
}

/// A task of the trace: one pod on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRow {
    /// `name`.
    pub name: String,
    /// `cpu_milli`.
    pub cpu_milli: u64,
    /// `memory_mib`.
    pub memory_mib: u64,
    /// `num_gpu`: 0 (CPU only), 1, 2, 4 or 8.
    pub num_gpu: u32,
    /// `gpu_milli`: per GPU; below 1000 only with `num_gpu == 1` (a share of one GPU).
    pub gpu_milli: u32,
    /// `gpu_spec`: the allowed models (a set; empty: any).
    pub gpu_spec: Vec<String>,
    /// `creation_time` and `deletion_time` in seconds, when the file has both columns
    /// (the time-based replay's arrivals and departures; the protocol ignores them).
    pub times: Option<(u64, u64)>,
}

impl PodRow {
    /// Its GPU demand in milli-GPU (`num_gpu × gpu_milli`).
    pub fn gpu_demand_milli(&self) -> u64 {
        u64::from(self.num_gpu) * u64::from(self.gpu_milli)
    }
}

/// A malformed trace file: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The file, as the caller named it.
    pub file: String,
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// What is wrong, naming the column.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

/// The rows of a CSV text with a header line: each row as a column → value lookup.
struct Table<'a> {
    file: &'a str,
    header: Vec<&'a str>,
    rows: Vec<(usize, Vec<&'a str>)>,
}

impl<'a> Table<'a> {
    fn parse(file: &'a str, text: &'a str) -> Result<Table<'a>, TraceError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            return Err(TraceError {
                file: file.into(),
                line: 0,
                message: "empty file: no header line".into(),
            });
        };
        let header: Vec<&str> = header
            .trim_start_matches('\u{feff}')
            .split(',')
            .map(str::trim)
            .collect();
        let rows = lines
            .map(|(i, l)| (i + 1, l.split(',').map(str::trim).collect()))
            .collect();
        Ok(Table { file, header, rows })
    }

    fn column(&self, name: &str) -> Result<usize, TraceError> {
        self.header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| TraceError {
                file: self.file.into(),
                line: 1,
                message: format!(
                    "no column `{name}` in the header ({})",
                    self.header.join(",")
                ),
            })
    }

    fn number(&self, line: usize, row: &[&str], col: usize) -> Result<u64, TraceError> {
        let text = row.get(col).copied().unwrap_or("");
        text.parse::<u64>().map_err(|_| TraceError {
            file: self.file.into(),
            line,
            message: format!(
                "column `{}`: {text:?} is not a non-negative integer",
                self.header[col]
            ),
        })
    }
}

/// Reads a node list.
pub fn read_nodes(file: &str, text: &str) -> Result<Vec<NodeRow>, TraceError> {
    let t = Table::parse(file, text)?;
    let (sn, cpu, mem, gpu, model) = (
        t.column("sn")?,
        t.column("cpu_milli")?,
        t.column("memory_mib")?,
        t.column("gpu")?,
        t.column("model")?,
    );
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, row) in &t.rows {
        let gpus = t.number(*line, row, gpu)?;
        out.push(NodeRow {
            name: row.get(sn).copied().unwrap_or("").to_owned(),
            cpu_milli: t.number(*line, row, cpu)?,
            memory_mib: t.number(*line, row, mem)?,
            gpus: u32::try_from(gpus).map_err(|_| TraceError {
                file: file.into(),
                line: *line,
                message: format!("column `gpu`: {gpus} GPUs is too many"),
            })?,
            model: row.get(model).copied().unwrap_or("").to_owned(),
        });
        if out.last().is_some_and(|n| n.name.is_empty()) {
            return Err(TraceError {
                file: file.into(),
                line: *line,
                message: "column `sn`: empty node name".into(),
            });
        }
    }
    Ok(out)
}

/// Reads a pod list (`gpu_spec` optional).
pub fn read_pods(file: &str, text: &str) -> Result<Vec<PodRow>, TraceError> {
    let t = Table::parse(file, text)?;
    let (name, cpu, mem, ngpu, milli) = (
        t.column("name")?,
        t.column("cpu_milli")?,
        t.column("memory_mib")?,
        t.column("num_gpu")?,
        t.column("gpu_milli")?,
    );
    let spec = t.column("gpu_spec").ok();
    let times = t
        .column("creation_time")
        .ok()
        .zip(t.column("deletion_time").ok());
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, row) in &t.rows {
        let bad = |message: String| TraceError {
            file: file.into(),
            line: *line,
            message,
        };
        let num_gpu = u32::try_from(t.number(*line, row, ngpu)?)
            .map_err(|_| bad("column `num_gpu`: too large".into()))?;
        let gpu_milli = u32::try_from(t.number(*line, row, milli)?)
            .map_err(|_| bad("column `gpu_milli`: too large".into()))?;
        if gpu_milli > 1000 {
            return Err(bad(format!(
                "column `gpu_milli`: {gpu_milli} is more than one GPU (1000)"
            )));
        }
        if num_gpu > 1 && gpu_milli != 1000 {
            return Err(bad(format!(
                "column `gpu_milli`: {gpu_milli} with num_gpu {num_gpu}: multi-GPU tasks take whole GPUs (1000)"
            )));
        }
        if (num_gpu == 0) != (gpu_milli == 0) {
            return Err(bad(format!(
                "columns `num_gpu` {num_gpu} and `gpu_milli` {gpu_milli}: either both are 0 or neither"
            )));
        }
        let mut gpu_spec: Vec<String> = spec
            .and_then(|c| row.get(c))
            .map(|s| {
                s.split('|')
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        gpu_spec.sort();
        gpu_spec.dedup();
        let times = match times {
            Some((c, d)) => {
                let (created, deleted) = (t.number(*line, row, c)?, t.number(*line, row, d)?);
                if deleted < created {
                    return Err(bad(format!(
                        "columns `creation_time` {created} and `deletion_time` {deleted}: deleted before created"
                    )));
                }
                Some((created, deleted))
            }
            None => None,
        };
        out.push(PodRow {
            name: row.get(name).copied().unwrap_or("").to_owned(),
            cpu_milli: t.number(*line, row, cpu)?,
            memory_mib: t.number(*line, row, mem)?,
            num_gpu,
            gpu_milli,
            gpu_spec,
            times,
        });
    }
    Ok(out)
}
