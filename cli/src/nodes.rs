//! `gangpack explain UNIT --nodes`: every node for one pod of the unit, with the
//! filter that rejects it and why (in the words of the explanation's facts) or how
//! many pods of its shape it takes and its score (`gangpack::Scheduler::node_table`).
//!
//! As `explain` does, one scheduling cycle runs first (due evictions carried out,
//! higher-priority work placed), and the table is for the state after it: a pod the
//! cycle binds gets the table of a pending copy of it, its node named in the heading.
//! `PODGROUP` shows its first pending member; `--pod` that pod (a member of a PodGroup
//! is seen in its group). `-o table` (default) prints `NodeTable`'s text: a heading,
//! then `NODE`, `DOMAIN` (with a topology key), `RESULT` (`feasible`, `planned (N)` or
//! the filter), `PODS`, `SCORE`, `ORDER`, `REASON`, one line per node in natural name
//! order; `-o json` / `-o yaml` print the `NodeTable` object (camelCase).

use gangpack::Unit;
use gangpack_k8s::output;

use crate::input::{self, Messages, namespaced};
use crate::{EXIT_OK, Failure, Format, Input, Options, Outcome, Run};

/// Runs `gangpack explain UNIT --nodes`.
pub fn explain_nodes(
    input: &Input,
    options: &Options,
    group: Option<&str>,
    pod: Option<&str>,
    format: Format,
) -> Run {
    let mut messages = Messages::default();
    let result = run(options, input, group, pod, format, &mut messages);
    Run::finish(result, messages)
}

fn run(
    global: &Options,
    input: &Input,
    group: Option<&str>,
    pod: Option<&str>,
    format: Format,
    messages: &mut Messages,
) -> Result<Outcome, Failure> {
    let unit = match (group, pod) {
        (Some(g), _) => Unit::Group(namespaced(g, global.namespace.as_deref())?),
        (None, Some(p)) => Unit::Pod(namespaced(p, global.namespace.as_deref())?),
        (None, None) => {
            return Err(Failure::invalid(
                "--nodes needs a unit: a PODGROUP or --pod NAMESPACE/NAME",
            ));
        }
    };
    let mut snapshot = input::snapshot(global, input, messages)?;
    let _ = output::plan(&mut snapshot);
    // An unknown unit: explain's error, with its "did you mean".
    crate::explain::check_exists(&snapshot.scheduler, &unit)?;
    let table = snapshot.scheduler.node_table(&unit).map_err(|e| match e {
        gangpack::SchedulerError::Cluster(gangpack::ClusterError::NotFound(_)) => {
            Failure::NotFound(format!("{unit} not found in the input"))
        }
        other => Failure::invalid(format!("{unit}: {other}")),
    })?;
    let stdout = match format {
        Format::Table => table.to_string(),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&table)
                .map_err(|e| Failure::Io(format!("cannot write the node table: {e}")))?;
            text.push('\n');
            text
        }
        Format::Yaml => serde_norway::to_string(&table)
            .map_err(|e| Failure::Io(format!("cannot write the node table: {e}")))?,
    };
    Ok(Outcome {
        stdout,
        code: EXIT_OK,
    })
}
