//! `podium serve --config FILE`: a TOML file whose keys are the flags of `podium serve`
//! (`listen = "0.0.0.0:8080"`, `plugin-timeout = 10`, `log-json = true`). A flag on the command
//! line, then its environment variable, overrides the file; the file overrides the defaults. A
//! key that is no flag, or a value its flag refuses, is an error naming the file and the key.
//! `--print-config` prints the configuration in effect, in the same form, without secrets.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context, bail};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use crate::serve::ServeCli;

/// Flags of `podium serve` that are not settings.
const NOT_KEYS: [&str; 2] = ["config", "print-config"];

/// Parses `podium serve`'s command line (`args` without the program's name), with the file of
/// `--config` under it. A mistake on the command line exits as clap does (usage, code 2).
pub(crate) fn parse(args: Vec<OsString>) -> anyhow::Result<ServeCli> {
    let argv =
        |args: &[OsString]| std::iter::once(OsString::from("podium serve")).chain(args.to_vec());
    let matches = ServeCli::command().get_matches_from(argv(&args));
    let Some(file) = matches.get_one::<std::path::PathBuf>("config").cloned() else {
        return Ok(ServeCli::from_arg_matches(&matches).expect("clap checked the arguments"));
    };
    let mut args = args;
    args.extend(file_args(&file, &matches)?);
    let matches = ServeCli::command().get_matches_from(argv(&args));
    Ok(ServeCli::from_arg_matches(&matches).expect("clap checked the arguments"))
}

/// The flags a configuration file adds: one per key whose flag was given neither on the command
/// line nor in the environment, each value checked by its flag alone first.
fn file_args(file: &Path, matches: &clap::ArgMatches) -> anyhow::Result<Vec<OsString>> {
    let name = file.display();
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {name}"))?;
    // Where and what, never the line itself: it may hold a password.
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map_or(0, |span| span.start);
        let before = &text[..at.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        anyhow::anyhow!(
            "{name}: not TOML at line {line}, column {column}: {}",
            e.message()
        )
    })?;
    let command = ServeCli::command();
    let keys: Vec<&str> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|long| !NOT_KEYS.contains(long))
        .collect();
    let mut added = Vec::new();
    for (key, value) in &table {
        let Some(arg) = command
            .get_arguments()
            .find(|a| a.get_long() == Some(key.as_str()) && !NOT_KEYS.contains(&key.as_str()))
        else {
            bail!(
                "{name}: `{key}` is not a setting of podium serve (the settings are its flags: {})",
                keys.join(", ")
            );
        };
        let is_switch = !arg.get_action().takes_values();
        // `--key=value`, so a value that starts with `-` is not read as a flag.
        let flag = match (value, is_switch) {
            (toml::Value::Boolean(true), true) => Some(format!("--{key}")),
            (toml::Value::Boolean(false), true) => None,
            (_, true) => bail!("{name}: `{key}` is true or false"),
            (toml::Value::String(s), false) => Some(format!("--{key}={s}")),
            (toml::Value::Integer(i), false) => Some(format!("--{key}={i}")),
            (toml::Value::Float(f), false) => Some(format!("--{key}={f}")),
            (other, false) => bail!(
                "{name}: `{key}` is a {}; it takes a string or a number",
                other.type_str()
            ),
        };
        let pair: Vec<OsString> = flag.into_iter().map(OsString::from).collect();
        // The value alone, so an error names the key rather than a flag nobody typed; checked
        // even where the command line or the environment overrides it: the file is wrong.
        let alone = std::iter::once(OsString::from("podium serve")).chain(pair.clone());
        if let Err(e) = ServeCli::command().try_get_matches_from(alone) {
            let message = e.to_string();
            let first = message.lines().next().unwrap_or_default();
            bail!("{name}: `{key}`: {}", first.trim_start_matches("error: "));
        }
        let overridden = matches!(
            matches.value_source(arg.get_id().as_str()),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        );
        if !overridden {
            added.extend(pair);
        }
    }
    Ok(added)
}

/// The configuration in effect as the TOML a `--config` file takes: every setting that has a
/// value (an unset optional one is left out), that value
/// from the command line, the environment, the file or the default; a database URL's password
/// shown as `***`.
pub(crate) fn print(args: &crate::serve::ServeArgs) -> anyhow::Result<String> {
    let mut value = toml::Table::try_from(args).context("showing the configuration")?;
    if let Some(toml::Value::String(url)) = value.get_mut("database-url") {
        *url = redacted(url);
    }
    Ok(toml::to_string(&value)?)
}

/// A database URL with its password (in the authority or as a `password` parameter) as `***`;
/// all of it, where it is no URL.
fn redacted(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return "***".into();
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    if parsed.query_pairs().any(|(k, _)| k == "password") {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "password" {
                    "***".into()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.to_string()
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_database_urls_password_is_never_shown() {
        assert_eq!(
            redacted("postgres://podium:s3cret@db:5432/podium"),
            "postgres://podium:***@db:5432/podium"
        );
        assert_eq!(
            redacted("postgres://db/podium?user=podium&password=s3cret"),
            "postgres://db/podium?user=podium&password=***"
        );
        assert_eq!(redacted("not a url s3cret"), "***");
    }
}
