//! Tests of command-line parsing: flags, value forms, subcommand, errors.

use std::path::PathBuf;

use clap::CommandFactory;
use clap::error::ErrorKind;

use super::values::*;
use super::*;

mod rules;
mod values;

fn parse(args: &[&str]) -> Result<Command, clap::Error> {
    parse_args(std::iter::once("oxiserve").chain(args.iter().copied()))
}

fn serve(args: &[&str]) -> ServerOptions {
    match parse(args) {
        Ok(Command::Serve(options)) => options,
        other => panic!("expected serve options for {args:?}, got {other:?}"),
    }
}

fn error(args: &[&str]) -> clap::Error {
    parse(args).expect_err("expected an error")
}

fn paths(paths: &[&str]) -> Vec<PathBuf> {
    paths.iter().map(PathBuf::from).collect()
}

/// Every flag of `tritonserver --help` (Triton 2.51) with a valid value
/// (`None`: the flag takes none).
const TRITON_FLAGS: &[(&str, Option<&str>)] = &[
    ("id", Some("x")),
    ("exit-timeout-secs", Some("5")),
    ("log-verbose", Some("1")),
    ("log-info", Some("false")),
    ("log-warning", Some("false")),
    ("log-error", Some("false")),
    ("log-format", Some("ISO8601")),
    ("log-file", Some("/tmp/log.txt")),
    ("model-store", Some("/m1")),
    ("model-repository", Some("/m2")),
    ("exit-on-error", Some("false")),
    ("disable-auto-complete-config", None),
    ("strict-readiness", Some("false")),
    ("model-control-mode", Some("poll")),
    ("repository-poll-secs", Some("3")),
    ("load-model", Some("a")),
    ("model-config-name", Some("h100")),
    ("model-load-thread-count", Some("2")),
    ("model-load-retry-count", Some("1")),
    ("model-namespacing", Some("true")),
    ("enable-peer-access", Some("false")),
    ("allow-http", Some("true")),
    ("http-address", Some("127.0.0.1")),
    ("http-port", Some("9000")),
    ("reuse-http-port", Some("true")),
    ("http-header-forward-pattern", Some("x-.*")),
    ("http-thread-count", Some("2")),
    (
        "http-restricted-api",
        Some("model-repository,health:admin-key=secret"),
    ),
    ("allow-grpc", Some("true")),
    ("grpc-address", Some("127.0.0.1")),
    ("grpc-port", Some("9001")),
    ("reuse-grpc-port", Some("true")),
    ("grpc-header-forward-pattern", Some("x-.*")),
    ("grpc-infer-allocation-pool-size", Some("4")),
    ("grpc-use-ssl", Some("true")),
    ("grpc-use-ssl-mutual", Some("true")),
    ("grpc-server-cert", Some("/c.pem")),
    ("grpc-server-key", Some("/k.pem")),
    ("grpc-root-cert", Some("/r.pem")),
    ("grpc-infer-response-compression-level", Some("high")),
    ("grpc-keepalive-time", Some("1000")),
    ("grpc-keepalive-timeout", Some("500")),
    ("grpc-keepalive-permit-without-calls", Some("1")),
    ("grpc-http2-max-pings-without-data", Some("0")),
    (
        "grpc-http2-min-recv-ping-interval-without-data",
        Some("1000"),
    ),
    ("grpc-http2-max-ping-strikes", Some("0")),
    ("grpc-max-connection-age", Some("60000")),
    ("grpc-max-connection-age-grace", Some("1000")),
    ("grpc-restricted-protocol", Some("inference:key=value")),
    ("allow-sagemaker", Some("true")),
    ("sagemaker-port", Some("9080")),
    ("sagemaker-safe-port-range", Some("9000-9100")),
    ("sagemaker-thread-count", Some("2")),
    ("allow-vertex-ai", Some("true")),
    ("vertex-ai-port", Some("9081")),
    ("vertex-ai-thread-count", Some("2")),
    ("vertex-ai-default-model", Some("m")),
    ("allow-metrics", Some("true")),
    ("allow-gpu-metrics", Some("false")),
    ("allow-cpu-metrics", Some("false")),
    ("metrics-address", Some("127.0.0.2")),
    ("metrics-port", Some("9002")),
    ("metrics-interval-ms", Some("500.5")),
    ("metrics-config", Some("summary_latencies=true")),
    ("trace-config", Some("triton,file=/tmp/trace.json")),
    ("backend-directory", Some("/b")),
    ("backend-config", Some("python,shm-default-byte-size=1024")),
    ("repoagent-directory", Some("/ra")),
    ("cache-config", Some("local,size=1048576")),
    ("cache-directory", Some("/cd")),
    ("rate-limit", Some("execution_count")),
    ("rate-limit-resource", Some("R1:2:0")),
    ("pinned-memory-pool-byte-size", Some("1024")),
    ("cuda-memory-pool-byte-size", Some("0:1024")),
    ("cuda-virtual-address-size", Some("0:2048")),
    ("min-supported-compute-capability", Some("7.5")),
    ("buffer-manager-thread-count", Some("2")),
    ("host-policy", Some("gpu0,numa-node=0")),
    ("model-load-gpu-limit", Some("0:0.5")),
    ("strict-model-config", Some("true")),
    ("response-cache-byte-size", Some("1024")),
    ("trace-file", Some("/tmp/trace.json")),
    ("trace-level", Some("TIMESTAMPS")),
    ("trace-rate", Some("10")),
    ("trace-count", Some("-1")),
    ("trace-log-frequency", Some("10")),
];

#[test]
fn every_triton_flag_is_recognized_with_its_value_form() {
    for (flag, value) in TRITON_FLAGS {
        let arg = match value {
            Some(value) => format!("--{flag}={value}"),
            None => format!("--{flag}"),
        };
        let base = ["--model-repository=/m", "--model-control-mode=explicit"];
        let result = parse(&[base[0], base[1], &arg]);
        assert!(result.is_ok(), "{arg}: {}", result.unwrap_err());
    }
}

/// Flags of newer Triton releases than 2.51, which TRITON_FLAGS lists.
const NEWER_TRITON_FLAGS: &[&str] = &["http-max-input-size"];

/// oxiserve's own flags: limits a careful operator sets, TLS for HTTP, and
/// the server threads' scheduling policy.
const OXISERVE_FLAGS: &[&str] = &[
    "batch-scheduling",
    "http-max-connections",
    "http-header-timeout-secs",
    "http-body-timeout-secs",
    "http-use-ssl",
    "http-use-ssl-mutual",
    "http-server-cert",
    "http-server-key",
    "http-root-cert",
    "grpc-max-input-size",
    "shared-memory-region-limit",
    "model-queue-limit",
];

#[test]
fn every_flag_is_a_triton_flag_and_has_help() {
    let cmd = Cli::command();
    for arg in cmd.get_arguments() {
        let long = arg.get_long().expect("every option is a long flag");
        assert!(
            TRITON_FLAGS.iter().any(|(flag, _)| *flag == long)
                || NEWER_TRITON_FLAGS.contains(&long)
                || OXISERVE_FLAGS.contains(&long),
            "--{long} is not Triton's nor one of oxiserve's own"
        );
        assert!(arg.get_help().is_some(), "--{long} has no help");
    }
}

#[test]
fn both_value_forms() {
    let joined = serve(&[
        "--model-repository=/m",
        "--http-port=9000",
        "--log-info=false",
        "--id=a",
    ]);
    let split = serve(&[
        "--model-repository",
        "/m",
        "--http-port",
        "9000",
        "--log-info",
        "false",
        "--id",
        "a",
    ]);
    assert_eq!(joined, split);
    assert_eq!(split.http.http_port, 9000);
    assert!(!split.logging.log_info);
    assert_eq!(split.id, "a");
}

#[test]
fn repeatable_flags_accumulate() {
    let options = serve(&[
        "--model-repository=/b",
        "--model-store=/a",
        "--model-repository",
        "/c",
        "--model-control-mode=explicit",
        "--load-model=y",
        "--load-model=x",
        "--backend-config=python,a=1",
        "--backend-config=b=2",
        "--rate-limit-resource=R1:2",
        "--rate-limit-resource=R2:3:1",
        "--host-policy=p,numa-node=0",
        "--host-policy=p,cpu-cores=0-3",
        "--metrics-config=a=1",
        "--metrics-config=b=2",
        "--trace-config=rate=5",
        "--trace-config=opentelemetry,url=http://x",
        "--cache-config=local,size=10",
        "--cache-config=redis,host=h",
        "--model-load-gpu-limit=0:0.5",
        "--model-load-gpu-limit=1:0.25",
        "--http-restricted-api=health:k=v",
        "--http-restricted-api=inference,metadata:k2=v2",
        "--grpc-restricted-protocol=health:k=v",
        "--grpc-restricted-protocol=trace:k=v",
        "--cuda-memory-pool-byte-size=0:1",
        "--cuda-memory-pool-byte-size=1:2",
        "--cuda-virtual-address-size=0:1",
        "--cuda-virtual-address-size=1:2",
        "--trace-level=TIMESTAMPS",
        "--trace-level=TENSORS",
    ]);
    // Repositories and start-up models are sets in Triton: sorted, no duplicates.
    assert_eq!(
        options.repository.model_repository,
        paths(&["/a", "/b", "/c"])
    );
    assert_eq!(options.repository.load_model, ["x", "y"]);
    assert_eq!(options.backend.backend_config.len(), 2);
    assert_eq!(options.rate_limiter.rate_limit_resource.len(), 2);
    assert_eq!(options.memory.host_policy.len(), 2);
    assert_eq!(options.metrics.metrics_config.len(), 2);
    assert_eq!(options.trace.trace_config.len(), 2);
    assert_eq!(options.cache.cache_config.len(), 2);
    assert_eq!(options.memory.model_load_gpu_limit.len(), 2);
    assert_eq!(options.http.http_restricted_api.len(), 2);
    assert_eq!(options.grpc.grpc_restricted_protocol.len(), 2);
    assert_eq!(options.memory.cuda_memory_pool_byte_size.len(), 2);
    assert_eq!(options.memory.cuda_virtual_address_size.len(), 2);
    assert_eq!(
        options.trace.trace_level,
        [TraceLevel::Timestamps, TraceLevel::Tensors]
    );
}

#[test]
fn duplicate_repositories_collapse() {
    let options = serve(&["--model-repository=/m", "--model-store=/m"]);
    assert_eq!(options.repository.model_repository, paths(&["/m"]));
}

#[test]
fn single_valued_flags_take_the_last_value() {
    let options = serve(&[
        "--model-repository=/m",
        "--http-port=1",
        "--http-port=2",
        "--log-info=0",
        "--log-info=1",
    ]);
    assert_eq!(options.http.http_port, 2);
    assert!(options.logging.log_info);
}

#[test]
fn booleans_take_every_spelling() {
    for (text, expected) in [
        ("true", true),
        ("TRUE", true),
        ("1", true),
        ("on", true),
        ("On", true),
        ("yes", true),
        ("YES", true),
        ("false", false),
        ("False", false),
        ("0", false),
        ("off", false),
        ("OFF", false),
        ("no", false),
        ("No", false),
    ] {
        let options = serve(&[
            "--model-repository=/m",
            &format!("--strict-readiness={text}"),
        ]);
        assert_eq!(options.repository.strict_readiness, expected, "{text}");
    }
}

#[test]
fn a_bad_boolean_is_a_clear_error() {
    let err = error(&["--model-repository=/m", "--allow-http=maybe"]);
    assert_eq!(err.kind(), ErrorKind::ValueValidation);
    let message = err.to_string();
    assert!(
        message.contains("maybe") && message.contains("--allow-http"),
        "{message}"
    );
    assert!(
        message.contains("true/false, 1/0, on/off or yes/no"),
        "{message}"
    );
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn disable_auto_complete_config_takes_no_value_and_forces_strict_config() {
    let options = serve(&["--model-repository=/m", "--disable-auto-complete-config"]);
    assert!(options.repository.disable_auto_complete_config);
    assert!(options.repository.strict_model_config);
    let err = error(&["--model-repository=/m", "--disable-auto-complete-config=1"]);
    assert_eq!(err.kind(), ErrorKind::TooManyValues);
}

#[test]
fn model_store_is_an_alias_of_model_repository() {
    let options = serve(&["--model-store=/models"]);
    assert_eq!(options.repository.model_repository, paths(&["/models"]));
    assert!(options.was_passed("model-repository"));
}

#[test]
fn validate_is_a_subcommand() {
    let command = parse(&["validate", "a", "b"]).unwrap();
    assert_eq!(
        command,
        Command::Validate {
            repositories: paths(&["a", "b"])
        }
    );
    assert_eq!(
        error(&["validate"]).kind(),
        ErrorKind::MissingRequiredArgument
    );
    let err = error(&["--model-repository=/m", "validate", "a"]);
    assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    assert!(
        err.to_string().contains("(got --model-repository)"),
        "{err}"
    );
    let err = error(&["validate", "a", "--strict-readiness=false"]);
    assert_eq!(err.kind(), ErrorKind::UnknownArgument);
    // A repository named "validate" is just a value.
    let options = serve(&["--model-repository", "validate"]);
    assert_eq!(options.repository.model_repository, paths(&["validate"]));
}

#[test]
fn unknown_flags_fail_with_a_suggestion() {
    let err = error(&["--model-repositry=/m"]);
    assert_eq!(err.kind(), ErrorKind::UnknownArgument);
    assert_eq!(err.exit_code(), 2);
    let message = err.to_string();
    assert!(
        message.contains("--model-repositry") && message.contains("--model-repository"),
        "{message}"
    );
    let err = error(&["--model-repository=/m", "stray"]);
    assert_eq!(err.kind(), ErrorKind::InvalidSubcommand);
}

#[test]
fn unambiguous_prefixes_work_like_getopt_long() {
    let options = serve(&["--model-repo=/m", "--http-p=9000", "--grpc-use-ssl=true"]);
    assert_eq!(options.http.http_port, 9000);
    assert!(options.grpc.grpc_use_ssl && !options.grpc.grpc_use_ssl_mutual);
    assert!(options.was_passed("http-port"));
    assert_eq!(
        error(&["--model-repository=/m", "--http=1"]).kind(),
        ErrorKind::UnknownArgument
    );
}

#[test]
fn a_model_repository_is_required_to_serve() {
    let err = error(&["--http-port=9000"]);
    assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
    assert!(
        err.to_string()
            .contains("--model-repository must be specified"),
        "{err}"
    );
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn help_is_not_an_error_exit() {
    let err = error(&["--help"]);
    assert_eq!(err.kind(), ErrorKind::DisplayHelp);
    assert_eq!(err.exit_code(), 0);
    let help = err.to_string();
    for heading in [
        "Model Repository:",
        "GRPC:",
        "Memory/Device Management:",
        "validate",
    ] {
        assert!(help.contains(heading), "{heading} missing from help");
    }
}
