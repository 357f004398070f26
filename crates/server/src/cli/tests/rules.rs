//! Tests of tritonserver's post-parse rules, the unsupported and deprecated
//! flag reports, and the options table.

use super::*;

#[test]
fn load_model_needs_explicit_mode_and_a_lone_wildcard() {
    let err = error(&["--model-repository=/m", "--load-model=a"]);
    assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    assert!(
        err.to_string().contains("--model-control-mode=explicit"),
        "{err}"
    );
    let err = error(&[
        "--model-repository=/m",
        "--model-control-mode=explicit",
        "--load-model=*",
        "--load-model=a",
    ]);
    assert!(err.to_string().contains("'*'"), "{err}");
    let options = serve(&[
        "--model-repository=/m",
        "--model-control-mode=explicit",
        "--load-model=*",
    ]);
    assert_eq!(options.repository.load_model, ["*"]);
}

#[test]
fn restricted_groups_are_known_and_in_one_group_only() {
    let cases = [
        (
            "--http-restricted-api=health,everything:k=v",
            "unknown restricted api 'everything'",
        ),
        (
            "--grpc-restricted-protocol=nope:k=v",
            "unknown restricted protocol 'nope'",
        ),
        (
            "--grpc-restricted-protocol=health,health:k=v",
            "restricted protocol 'health' can not be specified in multiple config groups",
        ),
    ];
    for (flag, message) in cases {
        let err = error(&["--model-repository=/m", flag]);
        assert_eq!(err.kind(), ErrorKind::ValueValidation, "{flag}");
        assert!(err.to_string().contains(message), "{flag}: {err}");
    }
    let err = error(&[
        "--model-repository=/m",
        "--http-restricted-api=inference:a=1",
        "--http-restricted-api=metadata,inference:b=2",
    ]);
    assert!(
        err.to_string()
            .contains("restricted api 'inference' can not be specified in multiple config groups"),
        "{err}"
    );
    // The same group on both endpoints is fine.
    serve(&[
        "--model-repository=/m",
        "--http-restricted-api=inference:a=1",
        "--grpc-restricted-protocol=inference:a=1",
    ]);
}

#[test]
fn cache_size_and_cache_config_conflict() {
    let err = error(&[
        "--model-repository=/m",
        "--response-cache-byte-size=1",
        "--cache-config=local,size=1",
    ]);
    assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    assert!(
        serve(&["--model-repository=/m", "--response-cache-byte-size=1"])
            .cache
            .cache_enabled()
    );
}

#[test]
fn endpoints_may_not_share_an_address_and_port() {
    let err = error(&[
        "--model-repository=/m",
        "--http-port=9000",
        "--grpc-port=9000",
    ]);
    assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    assert!(
        err.to_string().contains("HTTP requests and GRPC requests"),
        "{err}"
    );
    let err = error(&["--model-repository=/m", "--metrics-port=8000"]);
    assert!(err.to_string().contains("0.0.0.0:8000"), "{err}");
    // Different addresses, a disabled endpoint, or port 0 (any free port) are fine.
    serve(&[
        "--model-repository=/m",
        "--grpc-port=8000",
        "--grpc-address=127.0.0.1",
    ]);
    serve(&[
        "--model-repository=/m",
        "--grpc-port=8000",
        "--allow-http=false",
    ]);
    serve(&[
        "--model-repository=/m",
        "--http-port=0",
        "--grpc-port=0",
        "--metrics-port=0",
    ]);
}

#[test]
fn sagemaker_and_vertex_ai_ports_are_checked_as_triton_checks_them() {
    let err = error(&[
        "--model-repository=/m",
        "--allow-sagemaker=true",
        "--sagemaker-port=8000",
    ]);
    assert!(
        err.to_string()
            .contains("HTTP requests and SageMaker requests"),
        "{err}"
    );
    let err = error(&[
        "--model-repository=/m",
        "--allow-sagemaker=true",
        "--allow-vertex-ai=true",
    ]);
    assert!(
        err.to_string()
            .contains("SageMaker requests and Vertex AI requests"),
        "{err}"
    );
    let err = error(&[
        "--model-repository=/m",
        "--allow-sagemaker=true",
        "--sagemaker-safe-port-range=8001-8100",
    ]);
    assert!(
        err.to_string().contains(
            "The server cannot listen to HTTP requests at port 8000, allowed port range is [8001, 8100]"
        ),
        "{err}"
    );
    // Other addresses, port 0 and a range without SageMaker are fine.
    serve(&[
        "--model-repository=/m",
        "--allow-sagemaker=true",
        "--sagemaker-safe-port-range=8001-8100",
        "--http-address=127.0.0.1",
        "--grpc-port=0",
        "--metrics-port=8002",
    ]);
    serve(&["--model-repository=/m", "--sagemaker-safe-port-range=1-2"]);
}

#[test]
fn metrics_follow_http_address_and_allow_metrics() {
    let options = serve(&[
        "--model-repository=/m",
        "--http-address=127.0.0.1",
        "--allow-metrics=false",
    ]);
    assert_eq!(options.metrics.metrics_address, "127.0.0.1");
    assert!(!options.metrics.allow_gpu_metrics && !options.metrics.allow_cpu_metrics);
    let options = serve(&[
        "--model-repository=/m",
        "--http-address=127.0.0.1",
        "--metrics-address=0.0.0.0",
    ]);
    assert_eq!(options.metrics.metrics_address, "0.0.0.0");
}

#[test]
fn unsupported_options_lists_passed_flags_only() {
    assert!(
        serve(&["--model-repository=/m"])
            .unsupported_options()
            .is_empty()
    );
    let options = serve(&[
        "--model-repository=/m",
        "--allow-sagemaker=1",
        "--sagemaker-port=9080",
        "--rate-limit=execution_count",
        "--rate-limit-resource=R:1",
        "--host-policy=numa,cpu-cores=0-1",
        "--log-format=ISO8601",
        "--http-port=9000",
        "--cache-config=local,size=1",
    ]);
    assert_eq!(
        options.unsupported_options(),
        ["--host-policy: not supported yet (ignored)",]
    );
}

#[test]
fn turning_an_unsupported_feature_off_is_not_reported() {
    let options = serve(&[
        "--model-repository=/m",
        "--allow-sagemaker=false",
        "--allow-vertex-ai=false",
        "--rate-limit=off",
        "--log-format=default",
        "--model-namespacing=false",
        "--enable-peer-access=false",
        "--reuse-http-port=false",
        "--pinned-memory-pool-byte-size=0",
        "--cuda-memory-pool-byte-size=0:0",
        "--buffer-manager-thread-count=0",
        "--trace-level=OFF",
        "--trace-config=level=false",
        "--model-load-retry-count=0",
    ]);
    assert_eq!(options.unsupported_options(), Vec::<String>::new());
}

#[test]
fn mutual_ssl_implies_ssl() {
    let options = serve(&["--model-repository=/m", "--grpc-use-ssl-mutual=true"]);
    assert!(options.grpc.grpc_use_ssl);
    assert!(options.unsupported_options().is_empty());
}

#[test]
fn tables_name_real_flags() {
    let cmd = Cli::command();
    for flag in unsupported::flags_in_tables() {
        assert!(
            cmd.get_arguments().any(|arg| arg.get_long() == Some(flag)),
            "--{flag}"
        );
    }
}

#[test]
fn deprecated_flags_are_warned_about() {
    assert!(
        serve(&["--model-repository=/m"])
            .deprecation_warnings()
            .is_empty()
    );
    let options = serve(&[
        "--model-repository=/m",
        "--strict-model-config=false",
        "--trace-rate=5",
    ]);
    assert_eq!(
        options.deprecation_warnings(),
        [
            "--strict-model-config is deprecated; use --disable-auto-complete-config instead",
            "--trace-rate is deprecated; use --trace-config=rate=<rate> instead",
        ]
    );
}

#[test]
fn options_table_has_tritons_rows() {
    let options = serve(&["--model-repository=/models"]);
    let rows = options.options_table("2.51.0", &["classification", "sequence"]);
    let expected = [
        ("server_id", "triton"),
        ("server_version", "2.51.0"),
        ("server_extensions", "classification sequence"),
        ("model_repository_path[0]", "/models"),
        ("model_control_mode", "MODE_NONE"),
        ("strict_model_config", "0"),
        ("model_config_name", ""),
        ("rate_limit", "OFF"),
        ("pinned_memory_pool_byte_size", "268435456"),
        ("min_supported_compute_capability", "6.0"),
        ("strict_readiness", "1"),
        ("exit_timeout", "30"),
        ("cache_enabled", "0"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(rows, expected);
}

#[test]
fn options_table_lists_repeated_settings() {
    let options = serve(&[
        "--model-repository=/b",
        "--model-repository=/a",
        "--model-control-mode=explicit",
        "--load-model=m2",
        "--load-model=m1",
        "--rate-limit-resource=R1:2:0",
        "--rate-limit-resource=r2:3",
        "--cuda-memory-pool-byte-size=1:5",
        "--cuda-memory-pool-byte-size=0:7",
        "--cuda-memory-pool-byte-size=1:9",
        "--disable-auto-complete-config",
        "--cache-config=local,size=1",
        "--exit-timeout-secs=0",
    ]);
    let rows = options.options_table("0.1.0", &[]);
    let row = |name: &str| {
        rows.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    assert_eq!(row("model_repository_path[0]"), Some("/a"));
    assert_eq!(row("model_repository_path[1]"), Some("/b"));
    assert_eq!(row("model_control_mode"), Some("MODE_EXPLICIT"));
    assert_eq!(
        (row("startup_models_0"), row("startup_models_1")),
        (Some("m1"), Some("m2"))
    );
    assert_eq!(
        row("rate_limit_resource[0]"),
        Some(r#"{"name":"r2", "count":3 "device":-1}"#)
    );
    assert_eq!(
        row("rate_limit_resource[1]"),
        Some(r#"{"name":"R1", "count":2 "device":0}"#)
    );
    assert_eq!(row("cuda_memory_pool_byte_size{0}"), Some("7"));
    assert_eq!(row("cuda_memory_pool_byte_size{1}"), Some("9"));
    assert_eq!(row("strict_model_config"), Some("1"));
    assert_eq!(row("cache_enabled"), Some("1"));
    assert_eq!(row("exit_timeout"), Some("0"));
    let table_rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(key, value)| vec![key, value])
        .collect();
    assert!(render_table(&OPTIONS_TABLE_HEADERS, &table_rows).contains("| startup_models_0 "));
}
