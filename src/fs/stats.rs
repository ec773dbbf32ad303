//! The mount's `.stats` file: the counters of the block cache, the metadata
//! cache, the disk cache, the descriptor pool and (for a remote mount) the connection, as one
//! JSON document rendered afresh at each read, and sized by rendering it.

use crate::disk_cache::DiskCache;
use crate::read::Planner;
use crate::tree::{Attr, Tree};
use crate::views::json::json_bytes;

/// `attr` as the kernel is told it: the tree knows none of the bytes of a
/// file that tells of the mount ([`Attr::of_mount`]: `.stats`), so its size
/// is its document's, rendered now to be measured.
pub(super) fn sized(
    attr: Attr,
    planner: &Planner,
    tree: &Tree,
    disk: Option<&DiskCache>,
    plain_opens: (u64, u64),
) -> Attr {
    if !attr.of_mount {
        return attr;
    }
    Attr {
        size: document(planner, tree, disk, plain_opens).len() as u64,
        ..attr
    }
}

/// The `.stats` document of the mount `tree` read through `planner`;
/// `plain_opens`: opens of local files shown as themselves (through the
/// daemon, by passthrough).
pub(super) fn document(
    planner: &Planner,
    tree: &Tree,
    disk: Option<&DiskCache>,
    plain_opens: (u64, u64),
) -> Vec<u8> {
    let cache = planner.blocks().cache();
    let (bytes, entries) = cache.usage();
    let mut doc = planner
        .stats()
        .to_json(bytes as u64, cache.budget() as u64, entries as u64);
    let meta = tree.meta_stats();
    let fds = crate::source::fds::stats();
    if let Some(obj) = doc.as_object_mut() {
        obj.insert(
            "meta_cache".into(),
            serde_json::json!({ "budget": meta.budget, "bytes": meta.bytes, "entries": meta.entries, "loads": meta.loads, "evictions": meta.evictions }),
        );
        let names = crate::catalog::folder_listing::counts();
        obj.insert(
            "listing".into(),
            serde_json::json!({
                "names_skipped": names.skipped, "names_renamed": names.renamed,
                "names_hidden": names.hidden,
                "plain_opens": plain_opens.0 + plain_opens.1,
                "plain_passthrough_opens": plain_opens.1,
            }),
        );
        obj.insert(
            "descriptors".into(),
            serde_json::json!({
                "capacity": fds.pool.capacity, "cached": fds.pool.cached, "opens": fds.pool.opens,
                "reopens": fds.pool.reopens, "evictions": fds.pool.evictions, "retries": fds.retries,
            }),
        );
    }
    if let (Some(disk), Some(obj)) = (disk, doc.as_object_mut()) {
        obj.insert("disk_cache".into(), disk.to_json());
    }
    #[cfg(feature = "remote")]
    if let (Some(remote), Some(obj)) = (tree.remote_stats(), doc.as_object_mut()) {
        let mut shown = serde_json::json!({
            "requests": remote.requests(),
            "gets": remote.gets,
            "heads": remote.heads,
            "lists": remote.lists,
            "bytes_fetched": remote.bytes,
            "errors": remote.errors,
            "span_hits": remote.span_hits,
            "hint_gets": remote.hint_gets,
            "hint_bytes": remote.hint_bytes,
            "hint_hits": remote.hint_hits,
            "hints_dropped": remote.hints_dropped,
            "bytes_in_flight": remote.inflight,
            "bytes_in_flight_peak": remote.inflight_peak,
            "bytes_held_and_in_flight_peak": remote.pool_peak,
            "budget": remote.budget,
            "skipped_keys": remote.skipped_keys,
            "forged_listings": remote.forged_listings,
        });
        {
            use crate::source::remote::RequestKind;
            let per_kind = |counts: [u64; 3]| -> serde_json::Value {
                RequestKind::ALL
                    .iter()
                    .map(|k| (k.name().to_ascii_lowercase(), counts[k.index()].into()))
                    .collect::<serde_json::Map<String, serde_json::Value>>()
                    .into()
            };
            shown["retried"] = per_kind(remote.retried);
            shown["timeouts"] = per_kind(remote.timeouts);
            shown["failed"] = per_kind(remote.failed);
        }
        if remote.endpoints.iter().any(|&n| n > 0) {
            use crate::source::remote::stats::Endpoint;
            let endpoints: serde_json::Map<String, serde_json::Value> = Endpoint::ALL
                .iter()
                .map(|e| (e.name().to_string(), remote.endpoints[e.index()].into()))
                .collect();
            shown["endpoints"] = endpoints.into();
        }
        obj.insert("remote".into(), shown);
    }
    json_bytes(&doc)
}
