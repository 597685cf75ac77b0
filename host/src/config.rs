//! `podium serve --config FILE`: a TOML file whose keys are the flags of `podium serve`
//! (`listen = "0.0.0.0:8080"`, `plugin-timeout = 10`, `log-json = true`). A flag on the command
//! line, then its environment variable, overrides the file; the file overrides the defaults. A
//! key that is no flag, or a value its flag refuses, is an error naming the file and the key;
//! settings that need each other (`tls-cert` and `tls-key`) may come from any of the three.
//! `--print-config` prints the configuration in effect, in the same form, without secrets.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context, bail};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use crate::serve::ServeCli;

/// Flags of `podium serve` that are not settings.
const NOT_KEYS: [&str; 2] = ["config", "print-config"];

/// Parses `podium serve`'s command line (`args` without the program's name), with the file of
/// `--config` under it. A mistake on the command line exits as clap does (usage, code 2); a
/// setting the file lacks, that another one needs, is an error naming the file and the key.
pub(crate) fn parse(args: Vec<OsString>) -> anyhow::Result<ServeCli> {
    let argv =
        |args: &[OsString]| std::iter::once(OsString::from("podium serve")).chain(args.to_vec());
    // Which file, and what the command line and the environment already say. Settings that
    // need each other are not checked yet: the other one may be in the file.
    let matches = unchecked().get_matches_from(argv(&args));
    let Some(file) = matches.get_one::<std::path::PathBuf>("config").cloned() else {
        let matches = ServeCli::command().get_matches_from(argv(&args));
        return Ok(ServeCli::from_arg_matches(&matches).expect("clap checked the arguments"));
    };
    let mut args = args;
    args.extend(file_args(&file, &matches)?);
    let matches = ServeCli::command()
        .try_get_matches_from(argv(&args))
        .map_err(|e| match e.kind() {
            ErrorKind::MissingRequiredArgument => missing(&file, &e),
            _ => e.exit(),
        })?;
    Ok(ServeCli::from_arg_matches(&matches).expect("clap checked the arguments"))
}

/// `podium serve`'s command with no setting needing another.
fn unchecked() -> clap::Command {
    ServeCli::command().mut_args(|arg| arg.requires(clap::builder::Resettable::Reset))
}

/// The settings a setting needs, and that neither the file, the command line nor the
/// environment gave, named as keys of the file.
fn missing(file: &Path, error: &clap::Error) -> anyhow::Error {
    let command = ServeCli::command();
    let keys: Vec<String> = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(flags)) => flags
            .iter()
            .map(|flag| {
                // `--tls-key <TLS_KEY>`
                let long = flag.split_whitespace().next().unwrap_or(flag);
                let long = long.trim_start_matches("--");
                let env = command
                    .get_arguments()
                    .find(|a| a.get_long() == Some(long))
                    .and_then(|a| a.get_env())
                    .map(|env| format!(", or {}", env.to_string_lossy()))
                    .unwrap_or_default();
                format!("`{long}` (a key of the file, --{long}{env})")
            })
            .collect(),
        _ => vec!["a setting".to_owned()],
    };
    anyhow::anyhow!(
        "{}: another setting needs {}",
        file.display(),
        keys.join(" and ")
    )
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
        if let Err(e) = unchecked().try_get_matches_from(alone) {
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
    use std::ffi::OsString;

    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue, ErrorKind};

    use super::{NOT_KEYS, parse, redacted, unchecked};
    use crate::serve::ServeCli;

    /// Values for the settings that take one: each setting gets the first its flag accepts that
    /// is not its default.
    const SAMPLES: [&str; 3] = ["127.0.0.1:9", "http://podium.example:8080/", "7"];

    /// Every setting of `podium serve` (its long flags but `config` and `print-config`), and a
    /// value for it: as a TOML value, and as its flag.
    fn settings() -> Vec<(String, toml::Value, String)> {
        let command = ServeCli::command();
        command
            .get_arguments()
            .filter_map(|arg| arg.get_long())
            .filter(|long| !NOT_KEYS.contains(long))
            .map(|long| {
                let arg = command
                    .get_arguments()
                    .find(|a| a.get_long() == Some(long))
                    .unwrap();
                if !arg.get_action().takes_values() {
                    return (
                        long.to_owned(),
                        toml::Value::Boolean(true),
                        format!("--{long}"),
                    );
                }
                let sample = SAMPLES
                    .into_iter()
                    .find(|s| {
                        !arg.get_default_values().iter().any(|d| d == *s)
                            && unchecked()
                                .try_get_matches_from(["podium serve", &format!("--{long}={s}")])
                                .is_ok()
                    })
                    .unwrap_or_else(|| panic!("no sample value fits --{long}: add one"));
                let value = match sample.parse::<i64>() {
                    Ok(n) => toml::Value::Integer(n),
                    Err(_) => toml::Value::String(sample.to_owned()),
                };
                (long.to_owned(), value, format!("--{long}={sample}"))
            })
            .collect()
    }

    /// The settings `--KEY=VALUE` alone on the command line lacks (those it needs).
    fn needs(flag: &str) -> Vec<String> {
        match ServeCli::command().try_get_matches_from(["podium serve", flag]) {
            Ok(_) => Vec::new(),
            Err(e) if e.kind() == ErrorKind::MissingRequiredArgument => {
                let Some(ContextValue::Strings(missing)) = e.get(ContextKind::InvalidArg) else {
                    panic!("{flag}: clap names no missing argument: {e}");
                };
                missing
                    .iter()
                    .map(|m| {
                        m.split_whitespace()
                            .next()
                            .unwrap()
                            .trim_start_matches("--")
                            .to_owned()
                    })
                    .collect()
            }
            Err(e) => panic!("{flag}: {e}"),
        }
    }

    /// `podium serve` parsed with `file` as its `--config` and `args` on the command line: its
    /// settings (as `Debug` shows them), or the error.
    fn with_file(file: &toml::Table, args: &[&str]) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("podium.toml");
        std::fs::write(&path, toml::to_string(file).unwrap()).unwrap();
        let mut argv: Vec<OsString> = vec!["--config".into(), path.clone().into()];
        argv.extend(args.iter().map(OsString::from));
        parse(argv)
            .map(|cli| format!("{:?}", cli.args))
            .map_err(|e| {
                e.to_string()
                    .replace(&path.display().to_string(), "podium.toml")
            })
    }

    /// `podium serve FLAGS`' settings, as `Debug` shows them.
    fn with_flags(flags: &[&str]) -> String {
        let argv = flags.iter().map(OsString::from).collect();
        format!("{:?}", parse(argv).unwrap().args)
    }

    fn table(settings: &[&(String, toml::Value, String)]) -> toml::Table {
        settings
            .iter()
            .map(|(key, value, _)| (key.clone(), value.clone()))
            .collect()
    }

    #[test]
    fn every_setting_reads_the_same_from_the_file_as_from_its_flag() {
        let settings = settings();
        assert!(settings.len() > 20, "{settings:?}");
        let find = |key: &str| settings.iter().find(|(k, ..)| k == key).unwrap();
        for setting in &settings {
            // With what it needs, from the file too.
            let mut with: Vec<_> = vec![setting];
            with.extend(needs(&setting.2).iter().map(|key| find(key)));
            let flags: Vec<&str> = with.iter().map(|(.., flag)| flag.as_str()).collect();
            assert_eq!(
                with_file(&table(&with), &[]).unwrap_or_else(|e| panic!("{}: {e}", setting.0)),
                with_flags(&flags),
                "`{}` in the file",
                setting.0
            );
        }
        // All at once.
        let all: Vec<_> = settings.iter().collect();
        let flags: Vec<&str> = all.iter().map(|(.., flag)| flag.as_str()).collect();
        assert_eq!(with_file(&table(&all), &[]).unwrap(), with_flags(&flags));
    }

    #[test]
    fn settings_that_need_each_other_come_from_the_file_the_flags_or_both() {
        let settings = settings();
        let find = |key: &str| settings.iter().find(|(k, ..)| k == key).unwrap();
        let pairs: Vec<_> = settings
            .iter()
            .flat_map(|one| needs(&one.2).into_iter().map(move |other| (one, other)))
            .collect();
        assert!(
            pairs
                .iter()
                .any(|(one, other)| one.0 == "tls-cert" && other == "tls-key"),
            "{pairs:?}"
        );
        for (one, other) in pairs {
            let other = find(&other);
            let both = with_flags(&[&one.2, &other.2]);
            // One in the file, the other on the command line.
            assert_eq!(with_file(&table(&[one]), &[&other.2]).unwrap(), both);
            assert_eq!(with_file(&table(&[other]), &[&one.2]).unwrap(), both);
            // One alone: the file and the missing key named.
            let refused = with_file(&table(&[one]), &[]).unwrap_err();
            assert!(
                refused.starts_with("podium.toml: another setting needs")
                    && refused.contains(&format!("`{}`", other.0)),
                "{}: {refused}",
                one.0
            );
        }
    }

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
