//! Tidiness checks over the repository's own sources: what a reviewer would otherwise have to
//! remember.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, skipping build output and the peers' venvs.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_doc_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for dir in ["host", "crates", "plugins", "tests", "wasm-build"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap_or_default()
                .starts_with("//!")
        })
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not open with a `//!` comment saying what they are: {missing:?}"
    );
}

/// The walls between crates (ARCHITECTURE.md): each outside dependency that shapes a boundary is
/// named by one crate of the product only. Test code (`podium-tests`) and the plugins, which
/// build for wasm, are outside the walls.
const WALLS: &[(&str, &[&str])] = &[
    ("wasmtime", &["podium-runtime"]),
    ("wasmtime-wasi", &["podium-runtime"]),
    ("sqlx", &["podium-store"]),
    ("axum", &["podium-server"]),
    // The store's rows reach the application and no further: the API answers the model's views.
    ("podium-store", &["podium-app"]),
];

/// Crates that must not reach an outside dependency at all, even through another crate.
const NEVER_LINKS: &[(&str, &[&str])] = &[
    (
        "podium-types",
        &["sqlx", "wasmtime", "axum", "reqwest", "tokio"],
    ),
    ("podium-client", &["sqlx", "wasmtime", "axum"]),
    ("podium-app", &["axum", "utoipa-axum"]),
    // The plugin SDK builds outside this repository: nothing of the product.
    (
        "podium-plugin",
        &[
            "podium-types",
            "podium-runtime",
            "podium-app",
            "wasmtime",
            "sqlx",
            "axum",
        ],
    ),
];

#[test]
fn each_outside_dependency_is_linked_by_the_one_crate_that_owns_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .args(["--filter-platform", env!("PODIUM_TESTS_TARGET")])
        .current_dir(root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: Vec<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let packages = meta["packages"].as_array().unwrap();
    let name_of = |id: &str| -> String {
        packages
            .iter()
            .find(|p| p["id"] == id)
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let product = |name: &str| name.starts_with("podium") && name != "podium-tests";

    let mut crossings = Vec::new();
    for package in packages
        .iter()
        .filter(|p| members.contains(&p["id"].as_str().unwrap()))
    {
        let name = package["name"].as_str().unwrap();
        if !product(name) {
            continue;
        }
        for dep in package["dependencies"].as_array().unwrap() {
            if dep["kind"].as_str() == Some("dev") {
                continue;
            }
            let dep = dep["name"].as_str().unwrap();
            if let Some((_, owners)) = WALLS.iter().find(|(d, _)| *d == dep)
                && !owners.contains(&name)
            {
                crossings.push(format!(
                    "{name} depends on {dep}, which only {owners:?} may"
                ));
            }
        }
    }

    // Transitive: walk the resolved graph (normal and build edges) from each walled crate.
    let nodes = meta["resolve"]["nodes"].as_array().unwrap();
    for (krate, banned) in NEVER_LINKS {
        let start = packages
            .iter()
            .find(|p| p["name"] == *krate)
            .unwrap_or_else(|| panic!("no crate {krate}"))["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![start];
        while let Some(id) = todo.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            let name = name_of(&id);
            if banned.contains(&name.as_str()) {
                crossings.push(format!("{krate} links {name}"));
            }
            let node = nodes.iter().find(|n| n["id"] == id.as_str()).unwrap();
            for dep in node["deps"].as_array().unwrap() {
                let normal = dep["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build");
                if normal {
                    todo.push(dep["pkg"].as_str().unwrap().to_owned());
                }
            }
        }
    }
    assert!(crossings.is_empty(), "walls crossed: {crossings:#?}");
}

/// The application crate's modules, one per file, as paths (`["ipam", "space"]`).
fn modules(src: &Path) -> std::collections::BTreeMap<Vec<String>, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(src).unwrap().with_extension("");
            let mut path: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
                path.pop();
            }
            (path, f)
        })
        .collect()
}

/// The `crate::` and `super::` paths a file names outside its tests, each as segments; a
/// `use crate::{a::b, c}` group gives one path per item.
fn named_paths(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let segments = |s: &str| -> Vec<String> {
        s.split("::")
            .map(|p| {
                p.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|p| !p.is_empty())
            .collect()
    };
    let mut paths = Vec::new();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", module[..module.len().saturating_sub(1)].to_vec()),
    ] {
        for (at, _) in text.match_indices(prefix) {
            let before = text[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let rest = &text[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find("};").unwrap_or(group.len())];
                let (mut depth, mut item) = (0, String::new());
                for c in group.chars().chain([',']) {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            let mut p = base.clone();
                            p.extend(segments(item.trim()));
                            paths.push(p);
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    item.push(c);
                }
            } else {
                let mut p = base.clone();
                p.extend(segments(rest));
                paths.push(p);
            }
        }
    }
    paths
}

#[test]
fn the_application_crate_has_no_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let src = root.join("crates/podium-app/src");
    let modules = modules(&src);
    assert!(modules.len() > 30, "found only {} modules", modules.len());
    // A module depends on the deepest module file a path it names lies in.
    let graph: std::collections::BTreeMap<&Vec<String>, std::collections::BTreeSet<&Vec<String>>> =
        modules
            .iter()
            .map(|(module, file)| {
                let text = std::fs::read_to_string(file).unwrap();
                let deps = named_paths(&text, module)
                    .into_iter()
                    .filter_map(|path| {
                        (1..=path.len())
                            .rev()
                            .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
                    })
                    .filter(|dep| *dep != module)
                    .collect();
                (module, deps)
            })
            .collect();
    // Depth-first: a module met again while still on the path closes a cycle.
    fn visit<'a>(
        at: &'a Vec<String>,
        graph: &std::collections::BTreeMap<
            &'a Vec<String>,
            std::collections::BTreeSet<&'a Vec<String>>,
        >,
        path: &mut Vec<&'a Vec<String>>,
        done: &mut std::collections::BTreeSet<&'a Vec<String>>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|m| *m == at) {
            return Some(
                path[i..]
                    .iter()
                    .chain([&at])
                    .map(|m| m.join("::"))
                    .collect(),
            );
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for dep in &graph[at] {
            if let Some(cycle) = visit(dep, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = std::collections::BTreeSet::new();
    for module in graph.keys() {
        if let Some(cycle) = visit(module, &graph, &mut Vec::new(), &mut done) {
            panic!(
                "modules of podium-app import each other in a cycle: {}",
                cycle.join(" -> ")
            );
        }
    }
}

/// The HTTP API answers the application's errors in the application's words: no handler names
/// a type of the plugin runtime (the server's start-up, outside `api/`, configures it).
#[test]
fn the_http_api_names_nothing_of_the_plugin_runtime() {
    let naming = files_naming("crates/podium-server/src/api", None, "podium_runtime", 10);
    assert!(naming.is_empty(), "these name podium_runtime: {naming:?}");
}

/// The `.rs` files under `dir` (from the repository root), but those under `except`, whose
/// text contains `needle`; at least `least` files must be read, so that a moved folder fails.
fn files_naming(dir: &str, except: Option<&str>, needle: &str, least: usize) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(&root.join(dir), &mut files);
    assert!(files.len() > least, "found only {} files", files.len());
    files
        .iter()
        .filter(|f| except.is_none_or(|e| !f.starts_with(root.join(e))))
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .contains(needle)
        })
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect()
}

/// The store's rows carry the model's enums for what has a fixed set of values (states,
/// statuses, kinds, roles, error types) and a `Timestamp` for every moment (`*_at`, `at`,
/// `since`), never a free `String` that every reader must match or parse.
#[test]
fn no_row_keeps_a_state_status_kind_or_moment_as_a_string() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(&root.join("crates/podium-store/src"), &mut files);
    let names = [
        "state",
        "status",
        "kind",
        "power_state",
        "role",
        "source",
        "error_type",
    ];
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            let Some(field) = line.strip_prefix("pub ") else {
                continue;
            };
            let Some((name, ty)) = field.split_once(':') else {
                continue;
            };
            let ty = ty.trim().trim_end_matches(',');
            let name = name.trim();
            let moment = name == "at" || name.ends_with("_at") || name.ends_with("_since");
            if (names.contains(&name) || moment) && (ty == "String" || ty == "Option<String>") {
                found.push(format!(
                    "{}:{}: {line}",
                    file.strip_prefix(root).unwrap().display(),
                    n + 1
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "rows with a string where an enum or a Timestamp belongs: {found:#?}"
    );
}

/// The application's features work with its own types: only its data layer (`data/`) names
/// the store, so a change of a row's shape is one module's business.
#[test]
fn only_the_data_layer_of_the_app_names_the_store() {
    let naming = files_naming(
        "crates/podium-app/src",
        Some("crates/podium-app/src/data"),
        "podium_store",
        30,
    );
    assert!(naming.is_empty(), "these name podium_store: {naming:?}");
}

/// The store's functions that write a host's state (its `state`, or a new host): the lifecycle
/// module's to call.
const HOST_STATE_WRITERS: &[&str] = &[
    "hosts_sync",
    "host_create",
    "host_refresh",
    "host_power_read",
    "host_set_missing",
    "host_transition",
    "host_transition_queue",
    "host_registered",
    "host_inspected",
    "host_set_bmc_auth",
    "host_fail",
    "host_recover_power",
    "claim_finish_release",
    "composed_node_add",
];

/// Whether an item is compiled for tests only (`#[cfg(test)]`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        // `cfg(test)`, or `cfg(all(test, ...))`.
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>().is_ok_and(|m| match m {
                syn::Meta::Path(p) => p.is_ident("test"),
                syn::Meta::List(l) => {
                    l.path.is_ident("all")
                        && l.tokens
                            .to_string()
                            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .any(|w| w == "test")
                }
                syn::Meta::NameValue(_) => false,
            })
    })
}

/// The functions of `names` that `source` calls outside its tests, in the order it calls them:
/// as methods (however the call is written: chained, split over lines, in a closure or an async
/// block), as paths (`Datastore::host_fail(...)`), and in a macro's tokens (`tokio::select!`,
/// `tracing::info!`), which syn does not read as code.
fn method_calls(source: &str, names: &[&str]) -> Vec<String> {
    let file = syn::parse_file(source).expect("the source parses as Rust");
    calls(&file, names, false)
}

/// The `Podium` methods of `names` that `file` calls outside its tests: on `self` or on a
/// value named `podium` (`self.host_load(..)`, `podium.operations_fill()`), as paths
/// (`Podium::render(..)`, `Self::render(..)`), and so in macros' tokens;
/// `podium_named_otherwise` holds every other binding of a `Podium` to that name. A method of
/// another type that shares a name (the store's `host_get`) is called on something else, and
/// does not count.
fn podium_calls(file: &syn::File, names: &[&str]) -> Vec<String> {
    calls(file, names, true)
}

/// The calls of `names` in `file` outside its tests, as `method_calls` reads them; with
/// `on_podium`, only those made on a `Podium`, as `podium_calls` reads them.
fn calls(file: &syn::File, names: &[&str], on_podium: bool) -> Vec<String> {
    struct Calls<'a> {
        names: &'a [&'a str],
        on_podium: bool,
        found: Vec<String>,
    }
    fn is_podium(receiver: &syn::Expr) -> bool {
        match receiver {
            syn::Expr::Path(p) => p.path.is_ident("self") || p.path.is_ident("podium"),
            syn::Expr::Reference(r) => is_podium(&r.expr),
            syn::Expr::Paren(p) => is_podium(&p.expr),
            _ => false,
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Calls<'_> {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            let name = call.method.to_string();
            if self.names.contains(&name.as_str()) && (!self.on_podium || is_podium(&call.receiver))
            {
                self.found.push(name);
            }
            syn::visit::visit_expr_method_call(self, call);
        }
        fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
            let segments = &path.path.segments;
            let on = |s: &syn::PathSegment| s.ident == "Podium" || s.ident == "Self";
            if let Some(last) = segments.last()
                && self.names.contains(&last.ident.to_string().as_str())
                && segments.len() > 1
                && (!self.on_podium || (segments.len() == 2 && on(&segments[0])))
            {
                self.found.push(last.ident.to_string());
            }
            syn::visit::visit_expr_path(self, path);
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            let tokens = mac.tokens.to_string();
            let callers: &[&str] = if self.on_podium {
                &["self .", "podium .", "Podium ::", "Self ::"]
            } else {
                &["."]
            };
            for name in self.names {
                for caller in callers {
                    let call = format!("{caller} {name} (");
                    self.found
                        .extend(tokens.matches(&call).map(|_| name.to_string()));
                }
            }
            syn::visit::visit_macro(self, mac);
        }
    }
    let mut calls = Calls {
        names,
        on_podium,
        found: Vec::new(),
    };
    syn::visit::Visit::visit_file(&mut calls, file);
    calls.found
}

/// Whether SQL in `tokens` (a function's or a constant's, as syn prints them) sets a host's
/// `state` or inserts a host.
fn writes_host_state(tokens: &str) -> bool {
    // String literals keep their line continuations; SQL is compared as words.
    let sql = tokens
        .replace("\\\n", " ")
        .replace("\\n", " ")
        .to_ascii_lowercase();
    let words: Vec<&str> = sql
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '"'))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(3).any(|w| w == ["insert", "into", "hosts"])
        || words.windows(2).enumerate().any(|(at, w)| {
            if w != ["update", "hosts"] {
                return false;
            }
            let set: Vec<&str> = words[at + 2..]
                .iter()
                .copied()
                .take_while(|word| *word != "where")
                .collect();
            (0..set.len()).any(|i| {
                set[i].starts_with("state=")
                    || set[i] == "state" && set.get(i + 1).is_some_and(|n| n.starts_with('='))
            })
        })
}

/// The store's public functions that write a host's state: their SQL (in the function, or in
/// a constant or static it names) sets a host's `state` or inserts a host, or they call a
/// function of the store that does.
fn store_state_writers() -> Vec<String> {
    use quote::ToTokens;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(&root.join("crates/podium-store/src"), &mut files);
    // Every function, constant and static of the store: (name, public function, tokens).
    let mut items: Vec<(String, bool, String)> = Vec::new();
    for file in files {
        let parsed = syn::parse_file(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for item in parsed.items {
            match item {
                syn::Item::Fn(f) => items.push((
                    f.sig.ident.to_string(),
                    matches!(f.vis, syn::Visibility::Public(_)),
                    f.block.to_token_stream().to_string(),
                )),
                syn::Item::Const(c) => items.push((
                    c.ident.to_string(),
                    false,
                    c.expr.to_token_stream().to_string(),
                )),
                syn::Item::Static(s) => items.push((
                    s.ident.to_string(),
                    false,
                    s.expr.to_token_stream().to_string(),
                )),
                syn::Item::Impl(block) => {
                    for item in block.items {
                        if let syn::ImplItem::Fn(f) = item {
                            items.push((
                                f.sig.ident.to_string(),
                                matches!(f.vis, syn::Visibility::Public(_)),
                                f.block.to_token_stream().to_string(),
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // A use of `name`: the identifier on its own.
    let names = |tokens: &str, name: &str| {
        tokens.match_indices(name).any(|(at, _)| {
            let word = |c: char| c.is_alphanumeric() || c == '_';
            !tokens[..at].chars().next_back().is_some_and(word)
                && !tokens[at + name.len()..].chars().next().is_some_and(word)
        })
    };
    let mut writers: Vec<&str> = items
        .iter()
        .filter(|(_, _, tokens)| writes_host_state(tokens))
        .map(|(name, _, _)| name.as_str())
        .collect();
    loop {
        let more: Vec<&str> = items
            .iter()
            .filter(|(name, _, tokens)| {
                !writers.contains(&name.as_str()) && writers.iter().any(|w| names(tokens, w))
            })
            .map(|(name, _, _)| name.as_str())
            .collect();
        if more.is_empty() {
            break;
        }
        writers.extend(more);
    }
    let mut public: Vec<String> = items
        .iter()
        .filter(|(name, public, _)| *public && writers.contains(&name.as_str()))
        .map(|(name, _, _)| name.clone())
        .collect();
    public.sort();
    public.dedup();
    public
}

/// Only the lifecycle module (`lifecycle.rs`) writes a host's state: every other feature asks
/// it. Read from the code's calls: a call of a store function that writes a host's state
/// anywhere else in the app fails this, and so does a new such function of the store that the
/// list above does not name.
#[test]
fn only_the_lifecycle_module_writes_a_hosts_state() {
    // The checks find a call however it is written, and SQL however it is spelled.
    let sample = "fn f(p: &P) { let _ = p.datastore()\n    .host_transition(&id, T, now); \
                  Datastore::host_fail(d); tokio::select! { _ = d.host_create(h) => {} } }";
    assert_eq!(
        method_calls(sample, HOST_STATE_WRITERS),
        ["host_transition", "host_fail", "host_create"]
    );
    assert!(writes_host_state(
        r#""UPDATE hosts SET power_state = $2, \
         state = $3 WHERE id = $1""#
    ));
    assert!(writes_host_state(
        r#""UPDATE hosts SET state='error' WHERE id = $1""#
    ));
    assert!(!writes_host_state(
        r#""UPDATE hosts SET power_state = $2 WHERE state = 'missing'""#
    ));

    let mut listed: Vec<String> = HOST_STATE_WRITERS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        store_state_writers(),
        listed,
        "the store's writers of a host's state, and the list of them here, differ"
    );

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let src = root.join("crates/podium-app/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut outside = Vec::new();
    for file in &files {
        let calls = method_calls(&std::fs::read_to_string(file).unwrap(), HOST_STATE_WRITERS);
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        if name == "lifecycle.rs" {
            for writer in HOST_STATE_WRITERS {
                assert!(
                    calls.iter().any(|c| c == writer),
                    "lifecycle.rs never calls {writer}"
                );
            }
        } else {
            outside.extend(calls.into_iter().map(|c| format!("{name}: {c}")));
        }
    }
    assert!(
        outside.is_empty(),
        "a host's state written outside lifecycle.rs: {outside:#?}"
    );
}

/// The fields of `Podium`'s state (`Inner`, in `app.rs`) each with the module whose type it
/// holds (`operations: crate::operations::worker::Operations` is `operations`'s), where the
/// type is a module's of the crate.
fn inner_owners(src: &Path) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(src.join("app.rs")).unwrap();
    let file = syn::parse_file(&text).expect("app.rs parses as Rust");
    // What `app.rs` imports from the crate: the name it is used by, and its module.
    fn imports(
        tree: &syn::UseTree,
        module: Option<&str>,
        out: &mut std::collections::BTreeMap<String, String>,
    ) {
        match tree {
            syn::UseTree::Path(p) => match module {
                None if p.ident == "crate" => imports(&p.tree, Some(""), out),
                None => {}
                Some("") => imports(&p.tree, Some(&p.ident.to_string()), out),
                Some(m) => imports(&p.tree, Some(m), out),
            },
            syn::UseTree::Name(n) => {
                if let Some(m) = module.filter(|m| !m.is_empty()) {
                    out.insert(n.ident.to_string(), m.to_owned());
                }
            }
            syn::UseTree::Rename(r) => {
                if let Some(m) = module.filter(|m| !m.is_empty()) {
                    out.insert(r.rename.to_string(), m.to_owned());
                }
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| imports(t, module, out)),
            syn::UseTree::Glob(_) => {}
        }
    }
    let mut imported = std::collections::BTreeMap::new();
    for item in &file.items {
        if let syn::Item::Use(u) = item {
            imports(&u.tree, None, &mut imported);
        }
    }
    let mut owners = std::collections::BTreeMap::new();
    for item in &file.items {
        if let syn::Item::Struct(s) = item
            && s.ident == "Inner"
        {
            for field in &s.fields {
                let ty = &field.ty;
                // A crate path anywhere in the type (`OnceLock<Arc<crate::events::..>>`), else
                // a name `app.rs` imports from the crate.
                let ty = quote::quote!(#ty).to_string().replace(' ', "");
                let words = ty.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'));
                let owner =
                    words
                        .filter(|w| !w.is_empty())
                        .find_map(|w| match w.strip_prefix("crate::") {
                            Some(rest) => rest.split("::").next().map(str::to_owned),
                            None => imported.get(w.split("::").next().unwrap_or(w)).cloned(),
                        });
                if let (Some(name), Some(owner)) = (&field.ident, owner) {
                    owners.insert(name.to_string(), owner);
                }
            }
        }
    }
    owners
}

/// The fields of `Podium`'s state a file reaches (`self.inner.operations`, and so in macros'
/// tokens), outside its tests.
fn inner_fields(file: &syn::File) -> Vec<String> {
    struct Fields(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Fields {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
            if let (syn::Expr::Field(base), syn::Member::Named(name)) = (&*f.base, &f.member)
                && matches!(&base.member, syn::Member::Named(i) if i == "inner")
            {
                self.0.push(name.to_string());
            }
            syn::visit::visit_expr_field(self, f);
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            let tokens = mac.tokens.to_string();
            for (at, _) in tokens.match_indices(". inner . ") {
                let rest = &tokens[at + ". inner . ".len()..];
                self.0.push(
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
            syn::visit::visit_macro(self, mac);
        }
    }
    let mut fields = Fields(Vec::new());
    syn::visit::Visit::visit_file(&mut fields, file);
    fields.0
}

/// Where a file binds a `Podium` under another name than `podium` (a parameter or a field of
/// that type): `podium_calls` would not see the calls made on it.
fn podium_named_otherwise(file: &syn::File) -> Vec<String> {
    struct Names(Vec<String>);
    fn is_podium(ty: &syn::Type) -> bool {
        match ty {
            syn::Type::Reference(r) => is_podium(&r.elem),
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Podium"),
            _ => false,
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Names {
        fn visit_pat_type(&mut self, p: &'ast syn::PatType) {
            if is_podium(&p.ty) && !matches!(&*p.pat, syn::Pat::Ident(i) if i.ident == "podium") {
                let pat = &p.pat;
                self.0.push(quote::quote!(#pat).to_string());
            }
            syn::visit::visit_pat_type(self, p);
        }
        fn visit_field(&mut self, f: &'ast syn::Field) {
            if is_podium(&f.ty) && f.ident.as_ref().is_some_and(|i| i != "podium") {
                self.0.push(f.ident.as_ref().unwrap().to_string());
            }
            syn::visit::visit_field(self, f);
        }
    }
    let mut names = Names(Vec::new());
    syn::visit::Visit::visit_file(&mut names, file);
    names.0
}

/// The application's root: `Podium` and the state it holds (`app`, whose fields name each
/// feature's own state) and the crate's module list. Every feature reaches the shared state
/// through it; it is no feature of its own.
const ROOTS: &[&str] = &["app", "lib"];

/// The calls between the application's feature modules (the top-level modules of
/// `podium-app`): for each module, the modules whose `Podium` methods it calls (however the
/// call is written, as `podium_calls` reads them), whose items it names by a `crate::` path
/// (in code, in `use`, in macros' tokens) and whose state in `Podium` it reaches
/// (`self.inner.x`), each with the names that make the edge.
fn feature_calls(
    src: &Path,
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>> {
    use std::collections::BTreeMap;
    /// The methods of `impl Podium` blocks outside tests.
    struct Defs(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Defs {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
            let podium = matches!(&*i.self_ty, syn::Type::Path(p)
                if p.path.segments.last().is_some_and(|s| s.ident == "Podium"));
            if podium && i.trait_.is_none() {
                for item in &i.items {
                    if let syn::ImplItem::Fn(f) = item {
                        self.0.push(f.sig.ident.to_string());
                    }
                }
            }
        }
    }
    /// The `crate::x` paths a file names outside its tests.
    struct Named(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Named {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_path(&mut self, p: &'ast syn::Path) {
            let mut s = p.segments.iter();
            if let (Some(first), Some(second)) = (s.next(), s.next())
                && first.ident == "crate"
            {
                self.0.push(second.ident.to_string());
            }
            syn::visit::visit_path(self, p);
        }
        fn visit_use_tree(&mut self, t: &'ast syn::UseTree) {
            fn first(t: &syn::UseTree) -> Option<String> {
                match t {
                    syn::UseTree::Path(q) => Some(q.ident.to_string()),
                    syn::UseTree::Name(q) => Some(q.ident.to_string()),
                    syn::UseTree::Rename(q) => Some(q.ident.to_string()),
                    _ => None,
                }
            }
            if let syn::UseTree::Path(p) = t
                && p.ident == "crate"
            {
                match &*p.tree {
                    syn::UseTree::Group(g) => self.0.extend(g.items.iter().filter_map(first)),
                    tree => self.0.extend(first(tree)),
                }
                return;
            }
            syn::visit::visit_use_tree(self, t);
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            let tokens = mac.tokens.to_string();
            for (at, _) in tokens.match_indices("crate :: ") {
                let rest = &tokens[at + "crate :: ".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                self.0.push(name);
            }
            syn::visit::visit_macro(self, mac);
        }
    }
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module = |f: &Path| -> String {
        let rel = f.strip_prefix(src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
        first.trim_end_matches(".rs").to_owned()
    };
    let parsed: Vec<(String, String, syn::File)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let file = syn::parse_file(&text).expect("the source parses as Rust");
            (module(f), text, file)
        })
        .collect();
    let mut defined_in = BTreeMap::new();
    for (m, _, file) in &parsed {
        let mut defs = Defs(Vec::new());
        syn::visit::Visit::visit_file(&mut defs, file);
        for name in defs.0 {
            defined_in.insert(name, m.clone());
        }
    }
    let names: Vec<&str> = defined_in.keys().map(String::as_str).collect();
    let owners = inner_owners(src);
    let modules: std::collections::BTreeSet<&String> = parsed.iter().map(|(m, _, _)| m).collect();
    let mut graph: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (m, text, file) in &parsed {
        if ROOTS.contains(&m.as_str()) {
            continue;
        }
        let edges = graph.entry(m.clone()).or_default();
        let _ = text;
        for call in podium_calls(file, &names) {
            let to = &defined_in[&call];
            if to != m && !ROOTS.contains(&to.as_str()) {
                edges.entry(to.clone()).or_default().push(call);
            }
        }
        for field in inner_fields(file) {
            if let Some(to) = owners.get(&field)
                && to != m
                && !ROOTS.contains(&to.as_str())
            {
                edges
                    .entry(to.clone())
                    .or_default()
                    .push(format!("inner.{field}"));
            }
        }
        let mut named = Named(Vec::new());
        syn::visit::Visit::visit_file(&mut named, file);
        for to in named.0 {
            if to != *m && modules.contains(&to) && !ROOTS.contains(&to.as_str()) {
                edges
                    .entry(to.clone())
                    .or_default()
                    .push(format!("crate::{to}"));
            }
        }
    }
    for edges in graph.values_mut() {
        for names in edges.values_mut() {
            names.sort();
            names.dedup();
        }
    }
    graph
}

/// A cycle in `graph`, as the modules on it (the first repeated last), if there is one.
fn feature_cycle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>>,
) -> Option<Vec<String>> {
    fn visit<'a>(
        at: &'a String,
        graph: &'a std::collections::BTreeMap<
            String,
            std::collections::BTreeMap<String, Vec<String>>,
        >,
        path: &mut Vec<&'a String>,
        done: &mut std::collections::BTreeSet<&'a String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|m| *m == at) {
            let mut cycle: Vec<String> = path[i..].iter().map(|m| m.to_string()).collect();
            cycle.push(at.clone());
            return Some(cycle);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for next in graph.get(at).into_iter().flat_map(|e| e.keys()) {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

/// The feature modules of `podium-app` depend on each other in layers: no module reaches,
/// through the `Podium` methods it calls or the paths it names, a module that reaches it back
/// (the registry of pod managers and the operation queue below the features, the sync and the
/// operations' executor above them). Read from the code, as `feature_calls` reads it; a loop
/// written as `self.x()` calls, which need no `use`, fails it as one of imports would.
#[test]
fn feature_modules_call_each_other_in_no_cycle() {
    // The check finds a loop of calls and paths however written (a method called on `self` or
    // `podium`, a path call in a macro, a path in a macro, a renamed import, `Podium`'s state
    // reached through `inner`), and not a store method of the same name or a test's call.
    let sample = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = sample.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap()
    };
    write(
        "app.rs",
        "use crate::ipam::cache::PoolLocks; use crate::{pools::Pool as P, sealing::Sealer}; \
         struct Inner { locks: PoolLocks, tasks: crate::tasks::Background, sealer: Sealer, \
         pool: P, streams: OnceLock<Arc<crate::events::Streams>> }",
    );
    write(
        "hosts.rs",
        "impl Podium { fn host_load(&self) { self.datastore().claim_get(); \
         let _ = format!(\"{}\", crate::claims::NAME); } }",
    );
    write(
        "claims.rs",
        "impl Podium { fn claim_get(&self) { self.ip_hold(); } }",
    );
    write(
        "ipam/mod.rs",
        "use crate::{tenants as t}; \
         impl Podium { fn ip_hold(&self) { \
             tokio::select! { _ = Podium::host_load(self) => {} } let _ = &self.inner.locks; } } \
         fn run(podium: &Podium) { podium.tenant_get(); } \
         #[cfg(test)] mod tests { fn f() { crate::pools::X; } }",
    );
    write(
        "tenants.rs",
        "impl Podium { fn tenant_get(&self) { self.inner.tasks.run_now(); } }",
    );
    write("tasks.rs", "");
    write("events.rs", "");
    write("sealing.rs", "");
    write("pools.rs", "");
    let graph = feature_calls(sample.path());
    assert_eq!(graph["hosts"]["claims"], ["crate::claims"], "{graph:?}");
    assert_eq!(graph["claims"]["ipam"], ["ip_hold"], "{graph:?}");
    assert_eq!(graph["ipam"]["hosts"], ["host_load"], "{graph:?}");
    assert_eq!(
        graph["ipam"]["tenants"],
        ["crate::tenants", "tenant_get"],
        "{graph:?}"
    );
    assert_eq!(graph["ipam"].len(), 2, "{graph:?}");
    assert_eq!(graph["tenants"]["tasks"], ["inner.tasks"], "{graph:?}");
    let owners = inner_owners(sample.path());
    assert_eq!(owners["locks"], "ipam");
    assert_eq!(owners["sealer"], "sealing");
    assert_eq!(owners["pool"], "pools");
    assert_eq!(owners["streams"], "events");
    assert_eq!(
        feature_cycle(&graph),
        Some(vec![
            "claims".into(),
            "ipam".into(),
            "hosts".into(),
            "claims".into()
        ])
    );
    write(
        "hosts.rs",
        "impl Podium { fn host_load(&self) { self.datastore().claim_get(); } }",
    );
    assert_eq!(feature_cycle(&feature_calls(sample.path())), None);
    // Calls on a `Podium` of another name are not seen: no `Podium` has one.
    let other =
        syn::parse_file("fn f(p: &Podium) {} struct S { app: Podium, podium: Podium }").unwrap();
    assert_eq!(podium_named_otherwise(&other), ["p", "app"]);
    let mut files = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    rust_files(&root.join("crates/podium-app/src"), &mut files);
    for file in files {
        let parsed = syn::parse_file(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let named = podium_named_otherwise(&parsed);
        assert!(
            named.is_empty(),
            "{}: a Podium named {named:?}: name it `podium`, so that the calls on it are read",
            file.display()
        );
    }

    let graph = feature_calls(&root.join("crates/podium-app/src"));
    let edges: usize = graph.values().map(|e| e.len()).sum();
    assert!(edges > 100, "found only {edges} calls between modules");
    assert!(
        graph["pod_managers"].contains_key("chassis"),
        "the sync of a pod manager calls the chassis' sync: {:?}",
        graph["pod_managers"]
    );
    if let Some(cycle) = feature_cycle(&graph) {
        let shown: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("{} -> {} ({})", w[0], w[1], graph[&w[0]][&w[1]].join(", ")))
            .collect();
        panic!(
            "feature modules of podium-app call each other in a cycle:\n{}",
            shown.join("\n")
        );
    }
}
