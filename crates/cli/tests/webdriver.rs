//! The few W3C WebDriver commands the dashboard's browser test needs, over
//! HTTP to Debian's chromedriver driving headless Chromium: a session,
//! navigation, finding elements by CSS, clicking, reading text, a screenshot.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The key under which WebDriver returns an element's reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A browser session.
pub struct Session {
    base: String,
}

fn call(method: &str, url: &str, body: Option<Value>) -> Result<Value, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let resp = match (method, body) {
        ("GET", _) => agent.get(url).call(),
        ("DELETE", _) => agent.delete(url).call(),
        (_, b) => agent
            .post(url)
            .header("Content-Type", "application/json")
            .send(b.unwrap_or_else(|| json!({})).to_string()),
    };
    let mut resp = resp.map_err(|e| format!("{method} {url}: {e}"))?;
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("{method} {url}: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{url}: {e}: {text}"))?;
    if v["value"].get("error").is_some() {
        return Err(format!("{method} {url}: {}", v["value"]));
    }
    Ok(v["value"].clone())
}

impl Session {
    /// A headless Chromium of `size` through the chromedriver on `port`
    /// (waited for up to 10 s).
    pub fn start(port: u16, size: (u32, u32)) -> Result<Session, String> {
        let server = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        while call("GET", &format!("{server}/status"), None).is_err() {
            if start.elapsed() > Duration::from_secs(10) {
                return Err("chromedriver did not start".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", format!("--window-size={},{}", size.0, size.1)]
            }
        }}});
        let v = call("POST", &format!("{server}/session"), Some(caps))?;
        let id = v["sessionId"].as_str().ok_or("no session id")?;
        Ok(Session {
            base: format!("{server}/session/{id}"),
        })
    }

    /// Opens `url`.
    pub fn go(&self, url: &str) -> Result<(), String> {
        call(
            "POST",
            &format!("{}/url", self.base),
            Some(json!({"url": url})),
        )
        .map(|_| ())
    }

    fn ids(v: Value) -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e[ELEMENT].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every element `css` selects.
    pub fn find_all(&self, css: &str) -> Result<Vec<String>, String> {
        let q = json!({"using": "css selector", "value": css});
        call("POST", &format!("{}/elements", self.base), Some(q)).map(Session::ids)
    }

    /// The first element `css` selects inside `elem`.
    pub fn find_in(&self, elem: &str, css: &str) -> Result<String, String> {
        let q = json!({"using": "css selector", "value": css});
        let v = call(
            "POST",
            &format!("{}/element/{elem}/element", self.base),
            Some(q),
        )?;
        v[ELEMENT]
            .as_str()
            .map(String::from)
            .ok_or("not found".into())
    }

    /// Clicks `elem`.
    pub fn click(&self, elem: &str) -> Result<(), String> {
        call("POST", &format!("{}/element/{elem}/click", self.base), None).map(|_| ())
    }

    /// The text of the first element `css` selects.
    pub fn text(&self, css: &str) -> Result<String, String> {
        let q = json!({"using": "css selector", "value": css});
        let v = call("POST", &format!("{}/element", self.base), Some(q))?;
        let id = v[ELEMENT].as_str().ok_or("not found")?;
        let t = call("GET", &format!("{}/element/{id}/text", self.base), None)?;
        Ok(t.as_str().unwrap_or_default().to_string())
    }

    /// The page as a PNG into `path`.
    pub fn screenshot(&self, path: &std::path::Path) -> Result<(), String> {
        use base64::Engine;
        let v = call("GET", &format!("{}/screenshot", self.base), None)?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or_default())
            .map_err(|e| e.to_string())?;
        std::fs::write(path, png).map_err(|e| e.to_string())
    }

    /// Ends the session (the browser quits).
    pub fn end(self) {
        let _ = call("DELETE", &self.base, None);
    }
}

/// Runs `f` on a WebDriver session of Debian's chromedriver (headless
/// Chromium at `size`), started and ended around it; says it skipped when
/// chromium-driver is not installed.
pub fn with_chromium(size: (u32, u32), f: impl FnOnce(&Session)) {
    let Some(driver) = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        eprintln!(
            "SKIPPED the browser part: chromium-driver is not installed (.ci/run installs it)"
        );
        return;
    };
    let port = crate::util::free_port();
    let mut cd = std::process::Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let wd = Session::start(port, size).expect("a WebDriver session");
    f(&wd);
    wd.end();
    let _ = cd.kill();
    let _ = cd.wait();
}
