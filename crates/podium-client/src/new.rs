//! `podium plugin new --world WORLD NAME`: writes a plugin crate on the podium-plugin SDK from
//! the templates in `templates/` (a working plugin, a README and a test), outside any workspace.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The SDK of the source tree this binary was built from.
const BUILT_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk/podium-plugin");
/// Where the SDK is published: Podium's repository.
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

const CARGO_TOML: &str = include_str!("../templates/Cargo.toml.tmpl");
const README: &str = include_str!("../templates/README.md.tmpl");

/// The world a new plugin is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum World {
    HardwareDriver,
    Ipam,
    Renderer,
}

impl World {
    /// Its name in `wit/` and in the SDK.
    fn name(self) -> &'static str {
        match self {
            World::HardwareDriver => "hardware-driver",
            World::Ipam => "ipam",
            World::Renderer => "renderer",
        }
    }
}

/// A world's files: (path in the new crate, contents).
fn files(world: World) -> [(&'static str, &'static str); 3] {
    match world {
        World::HardwareDriver => [
            (
                "src/lib.rs",
                include_str!("../templates/hardware-driver/src/lib.rs"),
            ),
            (
                "tests/driver.rs",
                include_str!("../templates/hardware-driver/tests/driver.rs"),
            ),
            (
                "usage",
                include_str!("../templates/hardware-driver/usage.md"),
            ),
        ],
        World::Ipam => [
            ("src/lib.rs", include_str!("../templates/ipam/src/lib.rs")),
            (
                "tests/strategy.rs",
                include_str!("../templates/ipam/tests/strategy.rs"),
            ),
            ("usage", include_str!("../templates/ipam/usage.md")),
        ],
        World::Renderer => [
            (
                "src/lib.rs",
                include_str!("../templates/renderer/src/lib.rs"),
            ),
            (
                "tests/render.rs",
                include_str!("../templates/renderer/tests/render.rs"),
            ),
            ("usage", include_str!("../templates/renderer/usage.md")),
        ],
    }
}

/// Writes the crate `name` of `world` into the new folder `name`; returns the folder.
pub(crate) fn new_plugin(name: &str, world: World, sdk: Option<&str>) -> anyhow::Result<PathBuf> {
    check_name(name)?;
    let dir = PathBuf::from(name);
    if dir.exists() {
        anyhow::bail!("{}: already exists", dir.display());
    }
    let sdk = match sdk {
        Some(s) if s.contains("://") => format!("{{ git = {s:?} }}"),
        Some(path) => format!(
            "{{ path = {:?} }}",
            absolute(Path::new(path))?.display().to_string()
        ),
        None => match Path::new(BUILT_SDK).canonicalize() {
            Ok(path) => format!("{{ path = {:?} }}", path.display().to_string()),
            Err(_) => format!("{{ git = {REPOSITORY:?} }}"),
        },
    };
    let crate_name = name.replace('-', "_");
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{crate_name}}", &crate_name)
            .replace("{{world}}", world.name())
            .replace("{{sdk}}", &sdk)
    };
    let [lib, test, usage] = files(world);
    std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |path: &str, text: String| -> anyhow::Result<()> {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("Cargo.toml", fill(CARGO_TOML))?;
    write("README.md", fill(&README.replace("{{usage}}", usage.1)))?;
    write(lib.0, fill(lib.1))?;
    write(test.0, fill(test.1))?;
    write(".gitignore", "/target\n".to_owned())?;
    Ok(dir)
}

/// A name cargo takes for a package and Podium for a plugin: lower-case letters, digits and
/// `-`, starting with a letter.
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        anyhow::bail!(
            "{name:?}: a plugin's name is lower-case letters, digits and `-`, starting with a \
             letter, at most 64 characters"
        );
    }
    Ok(())
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    path.canonicalize()
        .with_context(|| format!("--sdk {}: no such folder", path.display()))
}
