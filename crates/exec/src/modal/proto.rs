//! The subset of Modal's published API (`modal_proto/api.proto`, package
//! `modal.client`, service `ModalClient`) that the backend uses, written
//! by hand as prost messages with the proto's own field numbers and types.
//! Enums travel as their `int32` values (wire-compatible); the constants
//! below name the values used. Fields the backend never sets or reads are
//! left out: protobuf skips unknown fields on decoding, and an absent field
//! is its default on the far side.

/// `google.protobuf.Empty`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Empty {}

/// `ObjectCreationType`.
pub const OBJECT_CREATION_TYPE_UNSPECIFIED: i32 = 0;
pub const OBJECT_CREATION_TYPE_CREATE_IF_MISSING: i32 = 1;

/// `FileDescriptor`.
pub const FILE_DESCRIPTOR_UNSPECIFIED: i32 = 0;
pub const FILE_DESCRIPTOR_STDOUT: i32 = 1;
pub const FILE_DESCRIPTOR_STDERR: i32 = 2;

/// `ExecOutputOption`.
pub const EXEC_OUTPUT_OPTION_PIPE: i32 = 2;

/// `NetworkAccess.NetworkAccessType`.
pub const NETWORK_ACCESS_OPEN: i32 = 1;
pub const NETWORK_ACCESS_BLOCKED: i32 = 2;

/// `GenericResult.GenericStatus`.
pub const GENERIC_STATUS_UNSPECIFIED: i32 = 0;
pub const GENERIC_STATUS_SUCCESS: i32 = 1;

#[derive(Clone, PartialEq, prost::Message)]
pub struct AppGetOrCreateRequest {
    #[prost(string, tag = "1")]
    pub app_name: String,
    #[prost(string, tag = "2")]
    pub environment_name: String,
    #[prost(int32, tag = "3")]
    pub object_creation_type: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct AppGetOrCreateResponse {
    #[prost(string, tag = "1")]
    pub app_id: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EnvironmentGetOrCreateRequest {
    #[prost(string, tag = "1")]
    pub deployment_name: String,
    #[prost(int32, tag = "2")]
    pub object_creation_type: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EnvironmentSettings {
    #[prost(string, tag = "1")]
    pub image_builder_version: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EnvironmentMetadata {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub settings: Option<EnvironmentSettings>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EnvironmentGetOrCreateResponse {
    #[prost(string, tag = "1")]
    pub environment_id: String,
    #[prost(message, optional, tag = "2")]
    pub metadata: Option<EnvironmentMetadata>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericResult {
    #[prost(int32, tag = "1")]
    pub status: i32,
    #[prost(string, tag = "2")]
    pub exception: String,
    #[prost(int32, tag = "3")]
    pub exitcode: i32,
    #[prost(string, tag = "4")]
    pub traceback: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BaseImage {
    #[prost(string, tag = "1")]
    pub image_id: String,
    #[prost(string, tag = "2")]
    pub docker_tag: String,
}

/// `Image`: an image from a registry is `FROM <reference>`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Image {
    #[prost(message, repeated, tag = "5")]
    pub base_images: Vec<BaseImage>,
    #[prost(string, repeated, tag = "6")]
    pub dockerfile_commands: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ImageGetOrCreateRequest {
    #[prost(message, optional, tag = "2")]
    pub image: Option<Image>,
    #[prost(string, tag = "4")]
    pub app_id: String,
    #[prost(bool, tag = "7")]
    pub force_build: bool,
    #[prost(string, tag = "9")]
    pub builder_version: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ImageGetOrCreateResponse {
    #[prost(string, tag = "1")]
    pub image_id: String,
    #[prost(message, optional, tag = "2")]
    pub result: Option<GenericResult>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ImageJoinStreamingRequest {
    #[prost(string, tag = "1")]
    pub image_id: String,
    #[prost(float, tag = "2")]
    pub timeout: f32,
    #[prost(string, tag = "3")]
    pub last_entry_id: String,
    #[prost(bool, tag = "4")]
    pub include_logs_for_finished: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ImageJoinStreamingResponse {
    #[prost(message, optional, tag = "1")]
    pub result: Option<GenericResult>,
    #[prost(string, tag = "3")]
    pub entry_id: String,
    #[prost(bool, tag = "4")]
    pub eof: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Resources {
    #[prost(uint32, tag = "2")]
    pub memory_mb: u32,
    #[prost(uint32, tag = "3")]
    pub milli_cpu: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NetworkAccess {
    #[prost(int32, tag = "1")]
    pub network_access_type: i32,
    #[prost(string, repeated, tag = "2")]
    pub allowed_cidrs: Vec<String>,
}

/// `Sandbox`: the definition SandboxCreate takes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sandbox {
    #[prost(string, repeated, tag = "1")]
    pub entrypoint_args: Vec<String>,
    #[prost(string, tag = "3")]
    pub image_id: String,
    #[prost(message, optional, tag = "5")]
    pub resources: Option<Resources>,
    #[prost(uint32, tag = "7")]
    pub timeout_secs: u32,
    #[prost(string, optional, tag = "8")]
    pub workdir: Option<String>,
    #[prost(bool, tag = "11")]
    pub block_network: bool,
    #[prost(message, optional, tag = "22")]
    pub network_access: Option<NetworkAccess>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SandboxTag {
    #[prost(string, tag = "1")]
    pub tag_name: String,
    #[prost(string, tag = "2")]
    pub tag_value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SandboxCreateRequest {
    #[prost(string, tag = "1")]
    pub app_id: String,
    #[prost(message, optional, tag = "2")]
    pub definition: Option<Sandbox>,
    #[prost(message, repeated, tag = "4")]
    pub tags: Vec<SandboxTag>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SandboxCreateResponse {
    #[prost(string, tag = "1")]
    pub sandbox_id: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SandboxGetTaskIdRequest {
    #[prost(string, tag = "1")]
    pub sandbox_id: String,
    #[prost(float, optional, tag = "2")]
    pub timeout: Option<f32>,
    #[prost(bool, tag = "3")]
    pub wait_until_ready: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SandboxGetTaskIdResponse {
    #[prost(string, optional, tag = "1")]
    pub task_id: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub task_result: Option<GenericResult>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerExecRequest {
    #[prost(string, tag = "1")]
    pub task_id: String,
    #[prost(string, repeated, tag = "2")]
    pub command: Vec<String>,
    #[prost(int32, tag = "6")]
    pub stdout_output: i32,
    #[prost(int32, tag = "7")]
    pub stderr_output: i32,
    #[prost(uint32, tag = "8")]
    pub timeout_secs: u32,
    #[prost(string, optional, tag = "9")]
    pub workdir: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerExecResponse {
    #[prost(string, tag = "1")]
    pub exec_id: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerExecGetOutputRequest {
    #[prost(string, tag = "1")]
    pub exec_id: String,
    #[prost(float, tag = "2")]
    pub timeout: f32,
    #[prost(uint64, tag = "3")]
    pub last_batch_index: u64,
    #[prost(int32, tag = "4")]
    pub file_descriptor: i32,
    #[prost(bool, tag = "5")]
    pub get_raw_bytes: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RuntimeOutputMessage {
    #[prost(int32, tag = "1")]
    pub file_descriptor: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(bytes = "vec", tag = "3")]
    pub message_bytes: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RuntimeOutputBatch {
    #[prost(message, repeated, tag = "1")]
    pub items: Vec<RuntimeOutputMessage>,
    #[prost(uint64, tag = "2")]
    pub batch_index: u64,
    #[prost(int32, optional, tag = "3")]
    pub exit_code: Option<i32>,
    #[prost(message, repeated, tag = "4")]
    pub stdout: Vec<RuntimeOutputMessage>,
    #[prost(message, repeated, tag = "5")]
    pub stderr: Vec<RuntimeOutputMessage>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RuntimeInputMessage {
    #[prost(bytes = "vec", tag = "1")]
    pub message: Vec<u8>,
    #[prost(uint64, tag = "2")]
    pub message_index: u64,
    #[prost(bool, tag = "3")]
    pub eof: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerExecPutInputRequest {
    #[prost(string, tag = "1")]
    pub exec_id: String,
    #[prost(message, optional, tag = "2")]
    pub input: Option<RuntimeInputMessage>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SandboxTerminateRequest {
    #[prost(string, tag = "1")]
    pub sandbox_id: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SandboxTerminateResponse {
    #[prost(message, optional, tag = "1")]
    pub existing_result: Option<GenericResult>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// Wire bytes worked out by hand from api.proto's field numbers and
    /// types (tag = field << 3 | wire type), so a wrong number cannot hide
    /// behind the contract server sharing these structs.
    #[test]
    fn field_numbers_match_the_published_proto() {
        let m = ContainerExecRequest {
            task_id: "ta".into(),
            command: vec!["sh".into()],
            stdout_output: 2,
            stderr_output: 2,
            timeout_secs: 0,
            workdir: Some("/".into()),
        };
        assert_eq!(
            m.encode_to_vec(),
            [
                0x0a, 2, b't', b'a', // 1: task_id
                0x12, 2, b's', b'h', // 2: command
                0x30, 2, // 6: stdout_output (varint)
                0x38, 2, // 7: stderr_output
                0x4a, 1, b'/', // 9: workdir (optional: sent when Some)
            ]
        );
        let b = RuntimeOutputBatch::decode(
            &[
                0x0a, 5, 0x08, 1, 0x1a, 1, b'x', // 1: items { fd 1, message_bytes "x" }
                0x10, 7, // 2: batch_index
                0x18, 3, // 3: exit_code
            ][..],
        )
        .unwrap();
        assert_eq!(
            (
                b.items[0].file_descriptor,
                &b.items[0].message_bytes[..],
                b.batch_index,
                b.exit_code
            ),
            (1, &b"x"[..], 7, Some(3))
        );
        let s = SandboxCreateRequest {
            app_id: "a".into(),
            definition: Some(Sandbox {
                image_id: "i".into(),
                timeout_secs: 5,
                network_access: Some(NetworkAccess {
                    network_access_type: NETWORK_ACCESS_BLOCKED,
                    allowed_cidrs: vec![],
                }),
                ..Default::default()
            }),
            tags: vec![],
        };
        assert_eq!(
            s.encode_to_vec(),
            [
                0x0a, 1, b'a', // 1: app_id
                0x12, 10, // 2: definition
                0x1a, 1, b'i', // 3: image_id
                0x38, 5, // 7: timeout_secs
                0xb2, 0x01, 2, 0x08, 2, // 22: network_access { 1: BLOCKED }
            ]
        );
        let t = SandboxGetTaskIdRequest {
            sandbox_id: "s".into(),
            timeout: Some(1.0),
            wait_until_ready: true,
        };
        assert_eq!(
            t.encode_to_vec(),
            [0x0a, 1, b's', 0x15, 0, 0, 0x80, 0x3f, 0x18, 1]
        );
    }
}
