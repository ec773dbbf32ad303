//! Keys under a remote root: `/`-separated names, `""` for the root
//! itself. Pure rules, shared by the listings, the root and its objects.

/// The key of child `name` of folder `key` (`""` is the root).
pub fn join(key: &str, name: &str) -> String {
    if key.is_empty() {
        name.to_string()
    } else {
        format!("{key}/{name}")
    }
}

/// The key `relative` names from the folder of `key` (lexically, `..`
/// allowed); `None` for an absolute path or URL, or one that climbs above
/// the root.
pub fn sibling_key(key: &str, relative: &str) -> Option<String> {
    if relative.starts_with('/') || relative.contains("://") {
        return None;
    }
    let mut parts: Vec<&str> = key.split('/').filter(|p| !p.is_empty()).collect();
    parts.pop();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/")).filter(|k| !k.is_empty())
}

/// The extension of a listed name (`None` for a dotfile without another dot).
pub fn extension(name: &str) -> Option<&str> {
    name.rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|_| !name.starts_with('.') || name.matches('.').count() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_joins() {
        assert_eq!(extension("a.b2nd"), Some("b2nd"));
        assert_eq!(extension("x.tar.b2z"), Some("b2z"));
        assert_eq!(extension("noext"), None);
        assert_eq!(extension(".hidden"), None);
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("a/b", "c"), "a/b/c");
    }

    /// Relative paths resolve under the root; absolute ones and climbs above it do not.
    #[test]
    fn sibling_keys_stay_under_the_root() {
        let key = |rel: &str| sibling_key("exp/e.b2nd", rel);
        assert_eq!(key("a.b2nd").as_deref(), Some("exp/a.b2nd"));
        assert_eq!(key("../ops/./a.b2nd").as_deref(), Some("ops/a.b2nd"));
        assert_eq!(sibling_key("e.b2nd", "a.b2nd").as_deref(), Some("a.b2nd"));
        assert_eq!(key("../../a.b2nd"), None, "above the root");
        assert_eq!(key("/data/a.b2nd"), None, "the writer's disk");
        assert_eq!(key("s3://other/a.b2nd"), None, "another place");
        assert_eq!(key(".."), None);
    }
}
