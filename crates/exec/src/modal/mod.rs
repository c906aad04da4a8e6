//! The modal backend: a native client of Modal's sandbox API, which is gRPC
//! over HTTP/2 (`modal.client.ModalClient` at `https://api.modal.com`),
//! written from its published protocol definitions (`proto.rs` holds the
//! messages used, with the proto's field numbers). It is a
//! [`HostProvider`], so commands get the host environment's machinery (a
//! local proxy per command that the pump, timeouts and kills follow; state
//! capture; files through [`crate::remote_fs`] scripts).
//!
//! Once per runtime: the app (`AppGetOrCreate`), the image builder version
//! (`EnvironmentGetOrCreate`, unless configured) and the image
//! (`ImageGetOrCreate` of `FROM <image>`, then `ImageJoinStreaming` until
//! its build has a result). Per task: `SandboxCreate` (`sleep infinity`,
//! CPU, memory, lifetime, network blocked unless allowed), then
//! `SandboxGetTaskId` with `wait_until_ready` for the task the commands
//! run in. Per command: one `ContainerExec` (`bash -c <script>`) and one
//! server-streaming `ContainerExecGetOutput` that carries the output as it
//! comes and ends with the exit code: two round trips, no polling. (The
//! server closes an output stream after the `timeout` the request names,
//! 55 s as Modal's own clients ask; a longer command's stream is reopened
//! from the last batch.) A script of the library's own reads stdout and
//! stderr apart (one stream each) and gets its input through
//! `ContainerExecPutInput`. A kill runs the mark's kill loop with one more
//! `ContainerExec`. Cleanup: `SandboxTerminate`.
//!
//! The token (`MODAL_TOKEN_ID`/`MODAL_TOKEN_SECRET` or the config) is only
//! ever written into the `x-modal-token-id`/`x-modal-token-secret` metadata:
//! `Debug` redacts it and no error or log line carries a request's headers.

mod grpc;
pub mod proto;

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::host::{HostCommand, HostEnv, HostExec, HostProvider};
use grpc::Client;
use proto as pb;

/// What Modal's clients send as `x-modal-client-type`: `CLIENT_TYPE_CLIENT`
/// (1). There is no value for other clients; Modal's Go client sends its
/// own type with the Python SDK version it behaves like, as we do here.
const CLIENT_TYPE: &str = "1";
/// `x-modal-client-version`: the Python SDK version whose API use this
/// client follows (the Go and JS clients send the same).
const CLIENT_VERSION: &str = "1.0.0";

/// How long a server-side wait may last per call (Modal's clients ask 55 s).
const SERVER_WAIT: f32 = 55.0;

/// `"terminal": {"modal": {...}}` as the exec layer takes it.
#[derive(Clone)]
pub struct ModalConfig {
    /// `https://api.modal.com` (or a test server's `http://` address).
    pub api_url: String,
    pub token_id: String,
    pub token_secret: String,
    /// The app sandboxes belong to (created when missing).
    pub app: String,
    /// The Modal environment (empty: the account's default).
    pub environment: String,
    /// A registry image reference (`python:3.12-slim`).
    pub image: String,
    /// Cores (fractions allowed); none: Modal's default.
    pub cpu: Option<f64>,
    pub memory_mb: Option<u32>,
    /// The sandbox's lifetime in seconds.
    pub timeout_secs: u32,
    /// Network access from the sandbox (default blocked).
    pub network: bool,
    /// The image builder version; none: the environment's.
    pub builder_version: Option<String>,
}

impl Default for ModalConfig {
    fn default() -> Self {
        ModalConfig {
            api_url: "https://api.modal.com".into(),
            token_id: String::new(),
            token_secret: String::new(),
            app: "hermes-tools".into(),
            environment: String::new(),
            image: "python:3.12-slim".into(),
            cpu: None,
            memory_mb: None,
            timeout_secs: 3600,
            network: false,
            builder_version: None,
        }
    }
}

impl std::fmt::Debug for ModalConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModalConfig")
            .field("api_url", &self.api_url)
            .field("token_id", &"<redacted>")
            .field("token_secret", &"<redacted>")
            .field("app", &self.app)
            .field("image", &self.image)
            .field("cpu", &self.cpu)
            .field("memory_mb", &self.memory_mb)
            .field("timeout_secs", &self.timeout_secs)
            .field("network", &self.network)
            .finish()
    }
}

impl ModalConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.token_id.trim().is_empty() || self.token_secret.trim().is_empty() {
            return Err(
                "modal: no token (set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or terminal.modal.token_id and token_secret)".into(),
            );
        }
        grpc::Endpoint::parse(&self.api_url).map_err(|e| format!("modal: api_url: {e}"))?;
        if self.image.trim().is_empty() {
            return Err("modal: terminal.modal.image is empty".into());
        }
        if self.app.trim().is_empty() {
            return Err("modal: terminal.modal.app is empty".into());
        }
        if let Some(c) = self.cpu
            && !(c > 0.0 && c <= 64.0)
        {
            return Err(format!("modal: cpu {c}: between 0 and 64 cores"));
        }
        if self.timeout_secs == 0 {
            return Err("modal: timeout must be at least 1 second".into());
        }
        Ok(())
    }
}

/// Run `f` where blocking is allowed: on this thread, or on a new one when
/// this thread is inside an async runtime (whose threads must not block).
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| s.spawn(f).join().expect("modal call thread"))
    } else {
        f()
    }
}

/// A task's sandbox.
#[derive(Clone)]
struct Sandbox {
    id: String,
    task_id: String,
}

struct Running {
    task: String,
    mark: Option<String>,
    /// Set when the terminal gave up on the command (SIGKILL): the reader
    /// stops waiting for its output.
    abandon: Arc<tokio::sync::Notify>,
}

/// The provider.
pub struct Modal {
    cfg: ModalConfig,
    client: Client,
    /// The app and the image, made once.
    app_image: Mutex<Option<(String, String)>>,
    /// Task -> its sandbox (an async lock: held while one is created).
    sandboxes: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Sandbox>>>>>,
    running: Mutex<HashMap<u64, Running>>,
    closed: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn disappeared() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        "the modal sandbox of this task disappeared (terminated or timed out); the next command creates a new one",
    )
}

/// A failed `GenericResult`, said plainly.
fn result_error(what: &str, r: &pb::GenericResult) -> io::Error {
    let why = if !r.exception.trim().is_empty() {
        r.exception.trim().to_string()
    } else {
        format!("status {} exit code {}", r.status, r.exitcode)
    };
    io::Error::other(format!("modal: {what} failed: {why}"))
}

impl Modal {
    pub fn new(cfg: ModalConfig) -> Result<Modal, String> {
        cfg.validate()?;
        let metadata = vec![
            ("x-modal-client-type", CLIENT_TYPE.to_string()),
            ("x-modal-client-version", CLIENT_VERSION.to_string()),
            ("x-modal-token-id", cfg.token_id.clone()),
            ("x-modal-token-secret", cfg.token_secret.clone()),
        ];
        let client = Client::new(&cfg.api_url, metadata).map_err(|e| format!("modal: {e}"))?;
        Ok(Modal {
            cfg,
            client,
            app_image: Mutex::new(None),
            sandboxes: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        })
    }

    /// The endpoint answers and takes the token: the app lookup (made when
    /// missing), one call.
    pub fn check(&self) -> io::Result<()> {
        off_runtime(|| self.client.block_on(self.app()).map(|_| ()))
    }

    /// gRPC calls made so far: all, and of one method (`ContainerExec`).
    pub fn calls(&self) -> u64 {
        self.client.calls()
    }
    pub fn calls_of(&self, rpc: &str) -> u64 {
        self.client.calls_of(rpc)
    }

    pub fn location(&self) -> String {
        format!(
            "in a Modal sandbox ({}, image {})",
            self.client.endpoint().host,
            self.cfg.image
        )
    }

    async fn app(&self) -> io::Result<String> {
        let r: pb::AppGetOrCreateResponse = self
            .client
            .unary(
                "AppGetOrCreate",
                &pb::AppGetOrCreateRequest {
                    app_name: self.cfg.app.clone(),
                    environment_name: self.cfg.environment.clone(),
                    object_creation_type: pb::OBJECT_CREATION_TYPE_CREATE_IF_MISSING,
                },
            )
            .await?;
        if r.app_id.is_empty() {
            return Err(io::Error::other("modal: AppGetOrCreate gave no app id"));
        }
        Ok(r.app_id)
    }

    async fn builder_version(&self) -> io::Result<String> {
        if let Some(v) = &self.cfg.builder_version {
            return Ok(v.clone());
        }
        let r: pb::EnvironmentGetOrCreateResponse = self
            .client
            .unary(
                "EnvironmentGetOrCreate",
                &pb::EnvironmentGetOrCreateRequest {
                    deployment_name: self.cfg.environment.clone(),
                    object_creation_type: pb::OBJECT_CREATION_TYPE_UNSPECIFIED,
                },
            )
            .await?;
        Ok(r.metadata
            .and_then(|m| m.settings)
            .map(|s| s.image_builder_version)
            .unwrap_or_default())
    }

    /// The image, built (or found built) by Modal.
    async fn image(&self, app_id: &str) -> io::Result<String> {
        let version = self.builder_version().await?;
        let r: pb::ImageGetOrCreateResponse = self
            .client
            .unary(
                "ImageGetOrCreate",
                &pb::ImageGetOrCreateRequest {
                    image: Some(pb::Image {
                        base_images: vec![],
                        dockerfile_commands: vec![format!("FROM {}", self.cfg.image)],
                    }),
                    app_id: app_id.to_string(),
                    force_build: false,
                    builder_version: version,
                },
            )
            .await?;
        let what = format!("building image {}", self.cfg.image);
        let mut result = r
            .result
            .filter(|g| g.status != pb::GENERIC_STATUS_UNSPECIFIED);
        let until = Instant::now() + Duration::from_secs(30 * 60);
        let mut last_entry = String::new();
        while result.is_none() {
            if Instant::now() > until {
                return Err(io::Error::other(format!(
                    "modal: {what}: no result within 30 minutes"
                )));
            }
            let mut s = self
                .client
                .start(
                    "ImageJoinStreaming",
                    &pb::ImageJoinStreamingRequest {
                        image_id: r.image_id.clone(),
                        timeout: SERVER_WAIT,
                        last_entry_id: last_entry.clone(),
                        include_logs_for_finished: false,
                    },
                )
                .await?;
            while let Some(m) = s
                .next::<pb::ImageJoinStreamingResponse>(&self.client)
                .await?
            {
                if !m.entry_id.is_empty() {
                    last_entry = m.entry_id;
                }
                if let Some(g) = m.result
                    && g.status != pb::GENERIC_STATUS_UNSPECIFIED
                {
                    result = Some(g);
                    break;
                }
                if m.eof {
                    break;
                }
            }
        }
        let g = result.expect("loop ends with one");
        if g.status != pb::GENERIC_STATUS_SUCCESS {
            return Err(result_error(&what, &g));
        }
        Ok(r.image_id)
    }

    async fn app_image(&self) -> io::Result<(String, String)> {
        if let Some(v) = lock(&self.app_image).clone() {
            return Ok(v);
        }
        let app = self.app().await?;
        let image = self.image(&app).await?;
        *lock(&self.app_image) = Some((app.clone(), image.clone()));
        Ok((app, image))
    }

    /// Task `task`'s sandbox, created and ready when it has none.
    async fn ensure(&self, task: &str) -> io::Result<Sandbox> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::other("modal backend is closed"));
        }
        let slot = lock(&self.sandboxes)
            .entry(task.to_string())
            .or_default()
            .clone();
        // One creation per task at a time.
        let mut g = slot.lock().await;
        if let Some(s) = g.as_ref() {
            return Ok(s.clone());
        }
        let (app_id, image_id) = self.app_image().await?;
        let resources =
            (self.cfg.cpu.is_some() || self.cfg.memory_mb.is_some()).then(|| pb::Resources {
                memory_mb: self.cfg.memory_mb.unwrap_or(0),
                milli_cpu: self
                    .cfg
                    .cpu
                    .map(|c| (c * 1000.0).round() as u32)
                    .unwrap_or(0),
            });
        let r: pb::SandboxCreateResponse = self
            .client
            .unary(
                "SandboxCreate",
                &pb::SandboxCreateRequest {
                    app_id,
                    definition: Some(pb::Sandbox {
                        entrypoint_args: vec!["sleep".into(), "infinity".into()],
                        image_id,
                        resources,
                        timeout_secs: self.cfg.timeout_secs,
                        workdir: None,
                        block_network: !self.cfg.network,
                        network_access: Some(pb::NetworkAccess {
                            network_access_type: if self.cfg.network {
                                pb::NETWORK_ACCESS_OPEN
                            } else {
                                pb::NETWORK_ACCESS_BLOCKED
                            },
                            allowed_cidrs: vec![],
                        }),
                    }),
                    tags: vec![pb::SandboxTag {
                        tag_name: "hermes-tools.task".into(),
                        tag_value: task.to_string(),
                    }],
                },
            )
            .await?;
        let until = Instant::now() + Duration::from_secs(10 * 60);
        let task_id = loop {
            let t: pb::SandboxGetTaskIdResponse = self
                .client
                .unary(
                    "SandboxGetTaskId",
                    &pb::SandboxGetTaskIdRequest {
                        sandbox_id: r.sandbox_id.clone(),
                        timeout: Some(SERVER_WAIT),
                        wait_until_ready: true,
                    },
                )
                .await?;
            if let Some(g) = &t.task_result
                && g.status != pb::GENERIC_STATUS_UNSPECIFIED
                && g.status != pb::GENERIC_STATUS_SUCCESS
            {
                return Err(result_error("starting the sandbox", g));
            }
            match t.task_id {
                Some(id) if !id.is_empty() => break id,
                _ if t.task_result.is_some() => {
                    return Err(io::Error::other(
                        "modal: the sandbox ended before it started",
                    ));
                }
                _ => {}
            }
            if Instant::now() > until {
                return Err(io::Error::other(
                    "modal: the sandbox did not start within 10 minutes",
                ));
            }
        };
        let s = Sandbox {
            id: r.sandbox_id,
            task_id,
        };
        *g = Some(s.clone());
        Ok(s)
    }

    /// Forget task `task`'s sandbox `id` (not one made since).
    async fn forget(&self, task: &str, id: &str) {
        let slot = lock(&self.sandboxes).get(task).cloned();
        if let Some(slot) = slot {
            let mut g = slot.lock().await;
            if g.as_ref().is_some_and(|s| s.id == id) {
                g.take();
            }
        }
    }

    /// `ContainerExec` of `argv` in the task's sandbox: its exec id. A
    /// sandbox the API no longer knows is forgotten.
    async fn exec(&self, task: &str, sb: &Sandbox, argv: Vec<String>) -> io::Result<String> {
        let r = self
            .client
            .unary::<pb::ContainerExecResponse>(
                "ContainerExec",
                &pb::ContainerExecRequest {
                    task_id: sb.task_id.clone(),
                    command: argv,
                    stdout_output: pb::EXEC_OUTPUT_OPTION_PIPE,
                    stderr_output: pb::EXEC_OUTPUT_OPTION_PIPE,
                    timeout_secs: 0,
                    workdir: None,
                },
            )
            .await;
        match r {
            Ok(r) => Ok(r.exec_id),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.forget(task, &sb.id).await;
                Err(disappeared())
            }
            Err(e) => Err(e),
        }
    }

    /// Stream `fd`'s output of `exec_id` to `out` until the exit code.
    async fn stream(
        &self,
        exec_id: &str,
        fd: i32,
        out: &Mutex<&mut HostExec>,
        capture: bool,
    ) -> io::Result<Option<i32>> {
        let mut last = 0u64;
        loop {
            let mut s = self
                .client
                .start(
                    "ContainerExecGetOutput",
                    &pb::ContainerExecGetOutputRequest {
                        exec_id: exec_id.to_string(),
                        timeout: SERVER_WAIT,
                        last_batch_index: last,
                        file_descriptor: fd,
                        get_raw_bytes: true,
                    },
                )
                .await?;
            while let Some(b) = s.next::<pb::RuntimeOutputBatch>(&self.client).await? {
                last = last.max(b.batch_index);
                for m in b.items.iter().chain(&b.stdout).chain(&b.stderr) {
                    let data = if m.message_bytes.is_empty() {
                        m.message.as_bytes()
                    } else {
                        &m.message_bytes[..]
                    };
                    let stream = match m.file_descriptor {
                        _ if !capture => 1,
                        pb::FILE_DESCRIPTOR_STDERR => 2,
                        pb::FILE_DESCRIPTOR_STDOUT => 1,
                        _ if fd == pb::FILE_DESCRIPTOR_STDERR => 2,
                        _ => 1,
                    };
                    if !data.is_empty() && lock(out).output(stream, data).is_err() {
                        // Nobody reads any more: the terminal kills it by its mark.
                        return Ok(None);
                    }
                }
                if let Some(c) = b.exit_code {
                    return Ok(Some(c));
                }
            }
            // The server's wait ended with the command still running:
            // the stream goes on from the last batch.
        }
    }

    /// Run `cmd`, streaming into `exec`: its exit code.
    async fn run(
        &self,
        cmd: &HostCommand,
        exec: &mut HostExec,
        abandon: &tokio::sync::Notify,
    ) -> io::Result<i32> {
        let sb = self.ensure(&cmd.task).await?;
        let script = if cmd.stdin.is_empty() {
            // No input: end of file at once, as a command run without a terminal sees.
            format!("exec </dev/null\n{}", cmd.script)
        } else {
            cmd.script.clone()
        };
        let exec_id = self
            .exec(&cmd.task, &sb, vec!["bash".into(), "-c".into(), script])
            .await?;
        let out = Mutex::new(exec);
        let work = async {
            if cmd.capture {
                let feed = self.feed(&exec_id, &cmd.stdin);
                let o = self.stream(&exec_id, pb::FILE_DESCRIPTOR_STDOUT, &out, true);
                let e = self.stream(&exec_id, pb::FILE_DESCRIPTOR_STDERR, &out, true);
                let (f, o, e) = tokio::join!(feed, o, e);
                f?;
                e?;
                o
            } else {
                // The script merged stderr into stdout already.
                self.stream(&exec_id, pb::FILE_DESCRIPTOR_STDOUT, &out, false)
                    .await
            }
        };
        let code = tokio::select! {
            r = work => r?,
            _ = abandon.notified() => None,
        };
        Ok(code.unwrap_or(255))
    }

    /// A script's input, through `ContainerExecPutInput` (in pieces of 1 MiB).
    async fn feed(&self, exec_id: &str, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let chunks: Vec<&[u8]> = data.chunks(1 << 20).collect();
        for (i, c) in chunks.iter().enumerate() {
            let _: pb::Empty = self
                .client
                .unary(
                    "ContainerExecPutInput",
                    &pb::ContainerExecPutInputRequest {
                        exec_id: exec_id.to_string(),
                        input: Some(pb::RuntimeInputMessage {
                            message: c.to_vec(),
                            message_index: i as u64 + 1,
                            eof: i + 1 == chunks.len(),
                        }),
                    },
                )
                .await?;
        }
        Ok(())
    }

    async fn kill_inside(&self, task: &str, mark: &str, signal: i32) -> io::Result<()> {
        let slot = lock(&self.sandboxes).get(task).cloned();
        let Some(sb) = (match slot {
            Some(s) => s.lock().await.clone(),
            None => None,
        }) else {
            return Ok(());
        };
        let script = crate::apptainer::kill_script(mark, signal);
        self.exec(task, &sb, vec!["bash".into(), "-c".into(), script])
            .await
            .map(|_| ())
    }

    async fn terminate(&self, sb: &Sandbox) -> io::Result<()> {
        match self
            .client
            .unary::<pb::SandboxTerminateResponse>(
                "SandboxTerminate",
                &pb::SandboxTerminateRequest {
                    sandbox_id: sb.id.clone(),
                },
            )
            .await
        {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r.map(|_| ()),
        }
    }
}

/// The provider as a host environment holds it (its command threads share it).
pub struct ModalProvider(pub Arc<Modal>);

impl HostProvider for ModalProvider {
    fn start(&self, cmd: HostCommand, exec: HostExec) {
        self.0.start(cmd, exec)
    }
    fn kill(&self, id: u64, signal: i32) {
        self.0.kill(id, signal)
    }
    fn cleanup(&self, task: Option<&str>) {
        self.0.cleanup(task)
    }
}

impl Modal {
    fn start(self: &Arc<Self>, cmd: HostCommand, mut exec: HostExec) {
        let abandon = Arc::new(tokio::sync::Notify::new());
        lock(&self.running).insert(
            cmd.id,
            Running {
                task: cmd.task.clone(),
                mark: cmd.mark.clone(),
                abandon: abandon.clone(),
            },
        );
        let m = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("ht-modal-{}", cmd.id))
            .spawn(move || {
                let r = m.client.block_on(m.run(&cmd, &mut exec, &abandon));
                lock(&m.running).remove(&cmd.id);
                match r {
                    Ok(code) => exec.finish(code, None),
                    Err(e) => exec.finish(255, Some(e.to_string())),
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("modal: cannot start a command thread: {e}");
        }
    }

    fn kill(self: &Arc<Self>, id: u64, signal: i32) {
        let found = lock(&self.running)
            .get(&id)
            .map(|r| (r.task.clone(), r.mark.clone(), r.abandon.clone()));
        let Some((task, mark, abandon)) = found else {
            return;
        };
        let m = self.clone();
        // The kill is a call of its own: never on the caller's thread
        // (which may be a runtime's).
        let _ = std::thread::Builder::new()
            .name("ht-modal-kill".into())
            .spawn(move || {
                if let Some(mark) = mark
                    && let Err(e) = m.client.block_on(m.kill_inside(&task, &mark, signal))
                {
                    tracing::debug!("modal: kill: {e}");
                }
                if signal == libc::SIGKILL {
                    // The terminal gave up on it: stop reading its output.
                    abandon.notify_one();
                }
            });
    }

    fn cleanup(&self, task: Option<&str>) {
        let tasks: Vec<String> = match task {
            Some(t) => vec![t.to_string()],
            None => {
                self.closed.store(true, Ordering::Release);
                lock(&self.sandboxes).keys().cloned().collect()
            }
        };
        let slots: Vec<_> = tasks
            .iter()
            .filter_map(|t| lock(&self.sandboxes).remove(t))
            .collect();
        if slots.is_empty() {
            return;
        }
        off_runtime(|| {
            self.client.block_on(async {
                for slot in slots {
                    let Some(sb) = slot.lock().await.take() else {
                        continue;
                    };
                    if let Err(e) = self.terminate(&sb).await {
                        tracing::warn!("modal cleanup: {e}");
                    }
                }
            })
        });
    }
}

/// The modal backend: a [`HostEnv`] over [`Modal`].
pub fn backend(cfg: ModalConfig) -> Result<(Arc<HostEnv>, Arc<Modal>), String> {
    let m = Arc::new(Modal::new(cfg)?);
    let env = HostEnv::builtin(
        "modal",
        Some(m.location()),
        Arc::new(ModalProvider(m.clone())),
    );
    Ok((Arc::new(env), m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_checks_and_redaction() {
        let c = ModalConfig {
            token_id: "ak-secret-id".into(),
            token_secret: "as-secret-value".into(),
            ..Default::default()
        };
        assert!(c.validate().is_ok());
        let d = format!("{c:?}");
        assert!(
            !d.contains("ak-secret-id") && !d.contains("as-secret-value"),
            "{d}"
        );
        assert!(
            ModalConfig::default()
                .validate()
                .unwrap_err()
                .contains("MODAL_TOKEN_ID")
        );
        let bad = ModalConfig {
            api_url: "grpc://x".into(),
            ..c.clone()
        };
        assert!(bad.validate().unwrap_err().contains("api_url"));
        let bad = ModalConfig {
            cpu: Some(0.0),
            ..c
        };
        assert!(bad.validate().is_err());
    }
}
