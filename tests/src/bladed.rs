//! A Redfish service of many racks of blade enclosures, made from DMTF's `public-bladed` mockup:
//! each enclosure is its `MultiBladeEncl`, each blade its `Blade1`, each blade's system its
//! first system, with ids and links rewritten; racks are chassis of type `Rack` holding the
//! enclosures. Written to a folder `sushy-static` serves as it is: for trees larger than DMTF
//! publishes (the 1,000-blade sync of `BENCHMARKS.md`) and with several racks (anti-affinity).

use std::path::Path;

use serde_json::{Value, json};

use crate::composition::mockup;

const ENCLOSURE: &str = "/redfish/v1/Chassis/MultiBladeEncl";
const BLADE: &str = "/redfish/v1/Chassis/Blade1";
const SYSTEM: &str = "529QB9450R6";

/// The shape of the generated service.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub racks: usize,
    pub enclosures_per_rack: usize,
    pub blades_per_enclosure: usize,
}

/// The paths of a generated rack, enclosure, blade and system.
pub fn rack_path(r: usize) -> String {
    format!("/redfish/v1/Chassis/Rack{r}")
}
pub fn enclosure_path(r: usize, e: usize) -> String {
    format!("/redfish/v1/Chassis/R{r}E{e}")
}
pub fn blade_path(r: usize, e: usize, b: usize) -> String {
    format!("/redfish/v1/Chassis/R{r}E{e}B{b}")
}
pub fn system_path(r: usize, e: usize, b: usize) -> String {
    format!("/redfish/v1/Systems/R{r}E{e}B{b}")
}

/// Writes the service into `to` (an empty folder).
pub fn write(to: &Path, shape: Shape) {
    let from = mockup("public-bladed");
    // Everything but the chassis and systems, as the mockup has it.
    for entry in walkdir::WalkDir::new(&from) {
        let entry = entry.expect("the mockup's files");
        let relative = entry.path().strip_prefix(&from).expect("within");
        if relative.starts_with("Chassis") || relative.starts_with("Systems") {
            continue;
        }
        let target = to.join(relative);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).expect("a folder");
        } else {
            std::fs::copy(entry.path(), &target).expect("a file");
        }
    }
    let read = |path: &str| -> String {
        std::fs::read_to_string(
            from.join(path.trim_start_matches("/redfish/v1/"))
                .join("index.json"),
        )
        .expect("the mockup has it")
    };
    let enclosure = read(ENCLOSURE);
    let blade = read(BLADE);
    let system = read(&format!("/redfish/v1/Systems/{SYSTEM}"));
    let mut chassis = Vec::new();
    let mut systems = Vec::new();
    for r in 0..shape.racks {
        let enclosures: Vec<String> = (0..shape.enclosures_per_rack)
            .map(|e| enclosure_path(r, e))
            .collect();
        put(
            to,
            &rack_path(r),
            json!({
                "@odata.type": "#Chassis.v1_25_0.Chassis",
                "@odata.id": rack_path(r),
                "Id": format!("Rack{r}"),
                "Name": format!("Rack {r}"),
                "ChassisType": "Rack",
                "PowerState": "On",
                "Status": {"State": "Enabled", "Health": "OK"},
                "Location": {"Placement": {"Row": "North", "Rack": format!("R{r}")}},
                "Links": {"Contains": links(&enclosures)},
            }),
        );
        chassis.push(rack_path(r));
        for e in 0..shape.enclosures_per_rack {
            let blades: Vec<String> = (0..shape.blades_per_enclosure)
                .map(|b| blade_path(r, e, b))
                .collect();
            let mut value: Value =
                serde_json::from_str(&enclosure.replace(ENCLOSURE, &enclosure_path(r, e)))
                    .expect("the enclosure's JSON");
            value["Id"] = json!(format!("R{r}E{e}"));
            value["Name"] = json!(format!("Enclosure {e} of rack {r}"));
            value["Links"]["Contains"] = links(&blades);
            value["Links"]["ContainedBy"] = json!({"@odata.id": rack_path(r)});
            value["Location"]["Placement"]["Rack"] = json!(format!("R{r}"));
            put(to, &enclosure_path(r, e), value);
            chassis.push(enclosure_path(r, e));
            for b in 0..shape.blades_per_enclosure {
                let text = blade
                    .replace(BLADE, &blade_path(r, e, b))
                    .replace(ENCLOSURE, &enclosure_path(r, e))
                    .replace(
                        &format!("/redfish/v1/Systems/{SYSTEM}"),
                        &system_path(r, e, b),
                    );
                let mut value: Value = serde_json::from_str(&text).expect("the blade's JSON");
                value["Id"] = json!(format!("R{r}E{e}B{b}"));
                value["Name"] = json!(format!("Blade {b} of R{r}E{e}"));
                put(to, &blade_path(r, e, b), value);
                chassis.push(blade_path(r, e, b));
                let text = system
                    .replace(
                        &format!("/redfish/v1/Systems/{SYSTEM}"),
                        &system_path(r, e, b),
                    )
                    .replace(BLADE, &blade_path(r, e, b));
                let mut value: Value = serde_json::from_str(&text).expect("the system's JSON");
                value["Id"] = json!(format!("R{r}E{e}B{b}"));
                value["Name"] = json!(format!("System of blade R{r}E{e}B{b}"));
                put(to, &system_path(r, e, b), value);
                // Its processors and storage, rewritten the same way.
                let parts = from.join("Systems").join(SYSTEM);
                for entry in walkdir::WalkDir::new(&parts).min_depth(1) {
                    let entry = entry.expect("the system's files");
                    if !entry.file_type().is_file() {
                        continue;
                    }
                    let relative = entry.path().strip_prefix(&parts).expect("within");
                    if relative == Path::new("index.json") {
                        continue;
                    }
                    let text = std::fs::read_to_string(entry.path())
                        .expect("a file")
                        .replace(
                            &format!("/redfish/v1/Systems/{SYSTEM}"),
                            &system_path(r, e, b),
                        );
                    let target = to
                        .join(system_path(r, e, b).trim_start_matches("/redfish/v1/"))
                        .join(relative);
                    std::fs::create_dir_all(target.parent().expect("a folder")).expect("a folder");
                    std::fs::write(target, text).expect("a file");
                }
                systems.push(system_path(r, e, b));
            }
        }
    }
    put(
        to,
        "/redfish/v1/Chassis",
        collection(
            "#ChassisCollection.ChassisCollection",
            "/redfish/v1/Chassis",
            &chassis,
        ),
    );
    put(
        to,
        "/redfish/v1/Systems",
        collection(
            "#ComputerSystemCollection.ComputerSystemCollection",
            "/redfish/v1/Systems",
            &systems,
        ),
    );
}

fn links(paths: &[String]) -> Value {
    Value::Array(paths.iter().map(|p| json!({"@odata.id": p})).collect())
}

fn collection(odata_type: &str, path: &str, members: &[String]) -> Value {
    json!({
        "@odata.type": odata_type,
        "@odata.id": path,
        "Name": "Collection",
        "Members@odata.count": members.len(),
        "Members": links(members),
    })
}

fn put(to: &Path, path: &str, value: Value) {
    let folder = to.join(
        path.trim_start_matches("/redfish/v1")
            .trim_start_matches('/'),
    );
    std::fs::create_dir_all(&folder).expect("a folder");
    std::fs::write(
        folder.join("index.json"),
        serde_json::to_vec_pretty(&value).expect("JSON"),
    )
    .expect("a file");
}
