//! Where the login for a Caterva2 server comes from: `CATERVA2_USERNAME`
//! and `CATERVA2_PASSWORD` in the environment, else the Caterva2 client's
//! own configuration file, `caterva2.toml`, searched where its client
//! searches (the working directory, `~/.caterva2.toml`, `/etc/caterva2.toml`):
//! the `username` and `password` of the table whose `url` is this server,
//! else of `[default]`. Only those keys are read; the file's other
//! settings are the client's business.

use std::path::PathBuf;

/// A username and password (never shown: [`std::fmt::Debug`] hides the password).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub(crate) username: String,
    pub(crate) password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

/// The login for the server at `api_base` (`http(s)://host[:port][/prefix]`),
/// if one is configured.
pub(crate) fn credentials(api_base: &str) -> Option<Credentials> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let (Some(username), Some(password)) = (env("CATERVA2_USERNAME"), env("CATERVA2_PASSWORD")) {
        return Some(Credentials { username, password });
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut files = vec![PathBuf::from("caterva2.toml")];
    files.extend(home.map(|h| h.join(".caterva2.toml")));
    files.push(PathBuf::from("/etc/caterva2.toml"));
    let text = files.iter().find_map(|p| std::fs::read_to_string(p).ok())?;
    from_toml(&text, api_base)
}

/// The `username` / `password` of the table of `text` whose `url` is
/// `api_base` (a trailing `/` aside), else of the `[default]` table.
pub(crate) fn from_toml(text: &str, api_base: &str) -> Option<Credentials> {
    let mut tables: Vec<(String, Vec<(String, String)>)> = vec![(String::new(), Vec::new())];
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            tables.push((name.trim().trim_matches('"').to_string(), Vec::new()));
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim();
        let unquoted = ['"', '\''].iter().find_map(|q| {
            value
                .strip_prefix(*q)
                .and_then(|v| v.split_once(*q))
                .map(|(v, _)| v.to_string())
        });
        if let (Some(value), Some(table)) = (unquoted, tables.last_mut()) {
            table.1.push((key.trim().to_string(), value));
        }
    }
    let get = |t: &(String, Vec<(String, String)>), k: &str| {
        t.1.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone())
    };
    let wanted = api_base.trim_end_matches('/');
    let table = tables
        .iter()
        .find(|t| get(t, "url").is_some_and(|u| u.trim_end_matches('/') == wanted))
        .or_else(|| tables.iter().find(|t| t.0 == "default"))?;
    Some(Credentials {
        username: get(table, "username")?,
        password: get(table, "password")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_this_server_wins_over_default() {
        let text = "# client settings\n[default]\nurl = \"http://other:8000\"\nusername = \"d\"\npassword = 'dpw'\n\n[lab]\nurl = \"http://127.0.0.1:8000/\"\nusername = \"alice\"\npassword = \"s=cret\" # a comment\n";
        let lab = from_toml(text, "http://127.0.0.1:8000").unwrap();
        assert_eq!(
            (lab.username.as_str(), lab.password.as_str()),
            ("alice", "s=cret")
        );
        let other = from_toml(text, "http://elsewhere").unwrap();
        assert_eq!(
            (other.username.as_str(), other.password.as_str()),
            ("d", "dpw")
        );
        assert_eq!(from_toml("[lab]\nusername = \"a\"\n", "http://x"), None);
        assert!(!format!("{lab:?}").contains("s=cret"));
    }
}
