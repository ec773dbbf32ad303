//! The AWS shared profile files (`~/.aws/credentials`, `~/.aws/config`,
//! or `AWS_SHARED_CREDENTIALS_FILE` / `AWS_CONFIG_FILE`), profile
//! `AWS_PROFILE` or `default`: the keys, region and endpoint it sets, as
//! S3 client settings. Environment variables are applied after these, so
//! they win, as in the AWS tools.

use std::path::PathBuf;

/// The settings of the selected profile as (`aws_...` key, value) pairs.
pub(crate) fn settings() -> Vec<(String, String)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let file = |var: &str, default: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(default)))
    };
    let profile = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
    let mut out = Vec::new();
    if let Some(text) =
        file("AWS_CONFIG_FILE", ".aws/config").and_then(|p| std::fs::read_to_string(p).ok())
    {
        let section = if profile == "default" {
            "default".to_string()
        } else {
            format!("profile {profile}")
        };
        out.extend(section_settings(&text, &section));
    }
    if let Some(text) = file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials")
        .and_then(|p| std::fs::read_to_string(p).ok())
    {
        out.extend(section_settings(&text, &profile));
    }
    out
}

/// The known keys of `[section]` in an INI-style profile file, renamed to
/// client settings.
fn section_settings(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == section;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !inside {
            continue;
        }
        let setting = match key.trim() {
            "aws_access_key_id" => "aws_access_key_id",
            "aws_secret_access_key" => "aws_secret_access_key",
            "aws_session_token" => "aws_session_token",
            "region" => "aws_region",
            "endpoint_url" => "aws_endpoint",
            _ => continue,
        };
        out.push((setting.to_string(), value.trim().to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::section_settings;

    #[test]
    fn profile_sections_give_their_keys_only() {
        let text = "[default]\naws_access_key_id = A1\n# comment\n[profile dev]\nregion=eu-west-1\nendpoint_url = http://127.0.0.1:9000\nother = x\n[dev]\naws_secret_access_key=S\n";
        assert_eq!(
            section_settings(text, "default"),
            vec![("aws_access_key_id".to_string(), "A1".to_string())]
        );
        assert_eq!(
            section_settings(text, "profile dev"),
            vec![
                ("aws_region".to_string(), "eu-west-1".to_string()),
                (
                    "aws_endpoint".to_string(),
                    "http://127.0.0.1:9000".to_string()
                )
            ]
        );
        assert_eq!(
            section_settings(text, "dev"),
            vec![("aws_secret_access_key".to_string(), "S".to_string())]
        );
    }
}
