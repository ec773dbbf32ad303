//! A `.b2d` store on object storage: the member files under its prefix,
//! listed with the same cached delimiter listings as the folders around it
//! ([`super::listings`]) and opened as remote objects through the mount's
//! one client, so the store logic of [`crate::source::store`] reads them as
//! it reads a local directory.

use std::sync::Arc;

use crate::format::byte_source::ByteSource;
use crate::format::Problem;
use crate::source::store::members::MemberFiles;
use crate::source::store::EMBED_NAME;

use super::keys::join;
use super::listings::Listings;

/// Deepest nesting of prefixes walked under a `.b2d`.
const MAX_DEPTH: usize = 64;

/// The member files under prefix `key` of a remote root.
#[derive(Debug)]
pub struct RemoteMembers {
    listings: Arc<Listings>,
    key: String,
}

impl RemoteMembers {
    /// The files under prefix `key`, as `listings` lists them.
    pub fn new(listings: Arc<Listings>, key: String) -> RemoteMembers {
        RemoteMembers { listings, key }
    }

    /// The key of `rel` (`""`: the store's prefix itself).
    fn under(&self, rel: &str) -> String {
        if rel.is_empty() {
            self.key.clone()
        } else {
            join(&self.key, rel)
        }
    }

    fn walk(&self, rel: &str, depth: usize, out: &mut Vec<String>) -> Result<(), Problem> {
        if depth > MAX_DEPTH {
            return Err(Problem::Limit(format!(
                "prefixes nested deeper than {MAX_DEPTH}"
            )));
        }
        let listing = self.listings.listing(&self.under(rel))?;
        for object in &listing.objects {
            out.push(join(rel, &object.name));
        }
        for dir in &listing.dirs {
            self.walk(&join(rel, dir), depth + 1, out)?;
        }
        Ok(())
    }
}

impl MemberFiles for RemoteMembers {
    fn list(&self) -> Result<Vec<String>, Problem> {
        let mut out = Vec::new();
        self.walk("", 0, &mut out)?;
        out.sort();
        Ok(out)
    }

    fn is_frame(&self, rel: &str) -> bool {
        let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        let Ok(listing) = self.listings.listing(&self.under(folder)) else {
            return false;
        };
        listing
            .objects
            .iter()
            .find(|o| o.name == name)
            .is_some_and(|o| self.listings.sniff(&self.under(rel), o))
    }

    fn open(&self, rel: &str) -> Result<Arc<dyn ByteSource>, Problem> {
        Ok(self.listings.location(&self.under(rel)).open()?)
    }

    fn open_embed(&self) -> Result<Option<Arc<dyn ByteSource>>, Problem> {
        let listing = self.listings.listing(&self.key)?;
        if !listing.objects.iter().any(|o| o.name == EMBED_NAME) {
            return Ok(None);
        }
        self.open(EMBED_NAME).map(Some)
    }
}
