//! Tests of defaults and typed values.

use super::*;

#[test]
fn defaults_match_tritonserver() {
    let o = serve(&["--model-repository=/m"]);
    assert_eq!(o.id, "triton");
    assert_eq!(o.exit_timeout_secs, 30);
    assert!(o.batch_scheduling, "oxiserve's own: SCHED_BATCH by default");
    assert!(!serve(&["--model-repository=/m", "--batch-scheduling=false"]).batch_scheduling);

    let log = &o.logging;
    assert_eq!(
        (
            log.log_verbose,
            log.log_info,
            log.log_warning,
            log.log_error
        ),
        (0, true, true, true)
    );
    assert_eq!(log.log_format, LogFormat::Default);
    assert_eq!(log.log_file, None);

    let r = &o.repository;
    assert!(r.exit_on_error && r.strict_readiness && r.enable_peer_access);
    assert!(!r.disable_auto_complete_config && !r.strict_model_config && !r.model_namespacing);
    assert_eq!(r.model_control_mode, ModelControlMode::None);
    assert_eq!(r.repository_poll_secs, 15);
    assert!(r.load_model.is_empty());
    assert_eq!(r.model_config_name, None);
    assert_eq!(
        (r.model_load_thread_count, r.model_load_retry_count),
        (4, 0)
    );

    let http = &o.http;
    assert!(http.allow_http && !http.reuse_http_port);
    assert_eq!(
        (http.http_address.as_str(), http.http_port),
        ("0.0.0.0", 8000)
    );
    assert_eq!(
        (
            http.http_header_forward_pattern.as_deref(),
            http.http_thread_count
        ),
        (None, None)
    );
    assert!(http.http_restricted_api.is_empty());

    let g = &o.grpc;
    assert!(g.allow_grpc && !g.reuse_grpc_port && !g.grpc_use_ssl && !g.grpc_use_ssl_mutual);
    assert_eq!((g.grpc_address.as_str(), g.grpc_port), ("0.0.0.0", 8001));
    assert_eq!(
        (
            g.grpc_header_forward_pattern.as_deref(),
            g.grpc_infer_allocation_pool_size
        ),
        (None, 8)
    );
    assert_eq!(
        (&g.grpc_server_cert, &g.grpc_server_key, &g.grpc_root_cert),
        (&None, &None, &None)
    );
    assert_eq!(
        g.grpc_infer_response_compression_level,
        GrpcCompressionLevel::None
    );
    assert_eq!(
        (g.grpc_keepalive_time, g.grpc_keepalive_timeout),
        (7_200_000, 20_000)
    );
    assert!(!g.grpc_keepalive_permit_without_calls);
    assert_eq!(g.grpc_http2_max_pings_without_data, 2);
    assert_eq!(g.grpc_http2_min_recv_ping_interval_without_data, 300_000);
    assert_eq!(g.grpc_http2_max_ping_strikes, 2);
    assert_eq!(
        (g.grpc_max_connection_age, g.grpc_max_connection_age_grace),
        (None, None)
    );
    assert!(g.grpc_restricted_protocol.is_empty());

    let s = &o.sagemaker;
    assert!(!s.allow_sagemaker);
    assert_eq!(
        (
            s.sagemaker_port,
            s.sagemaker_safe_port_range,
            s.sagemaker_thread_count
        ),
        (8080, None, 8)
    );
    let v = &o.vertex_ai;
    assert!(!v.allow_vertex_ai);
    assert_eq!(
        (
            v.vertex_ai_port,
            v.vertex_ai_thread_count,
            v.vertex_ai_default_model.as_deref()
        ),
        (8080, 8, None)
    );

    let m = &o.metrics;
    assert!(m.allow_metrics && m.allow_gpu_metrics && m.allow_cpu_metrics);
    assert_eq!(
        (m.metrics_address.as_str(), m.metrics_port),
        ("0.0.0.0", 8002)
    );
    assert_eq!(m.metrics_interval_ms, 2000.0);
    assert!(m.metrics_config.is_empty());

    let t = &o.trace;
    assert!(t.trace_config.is_empty() && t.trace_level.is_empty() && t.trace_file.is_none());
    assert_eq!(
        (t.trace_rate, t.trace_count, t.trace_log_frequency),
        (1000, -1, 0)
    );

    assert_eq!(
        o.backend.backend_directory,
        PathBuf::from("/opt/tritonserver/backends")
    );
    assert!(o.backend.backend_config.is_empty());
    assert_eq!(
        o.backend.repoagent_directory,
        PathBuf::from("/opt/tritonserver/repoagents")
    );

    let c = &o.cache;
    assert!(
        c.cache_config.is_empty() && c.response_cache_byte_size.is_none() && !c.cache_enabled()
    );
    assert_eq!(c.cache_directory, PathBuf::from("/opt/tritonserver/caches"));

    assert_eq!(o.rate_limiter.rate_limit, RateLimitMode::Off);
    assert!(o.rate_limiter.rate_limit_resource.is_empty());

    let mem = &o.memory;
    assert_eq!(mem.pinned_memory_pool_byte_size, 256 << 20);
    assert!(mem.cuda_memory_pool_byte_size.is_empty() && mem.cuda_virtual_address_size.is_empty());
    assert_eq!(
        (
            mem.min_supported_compute_capability,
            mem.buffer_manager_thread_count
        ),
        (6.0, 0)
    );
    assert!(mem.host_policy.is_empty() && mem.model_load_gpu_limit.is_empty());
}

#[test]
fn typed_values_are_parsed() {
    let o = serve(&[
        "--model-store=/m",
        "--model-control-mode=POLL",
        "--log-verbose=true",
        "--log-format=ISO8601",
        "--grpc-infer-response-compression-level=Medium",
        "--rate-limit=EXECUTION_COUNT",
        "--rate-limit-resource=R1:2:0",
        "--sagemaker-safe-port-range=9000-9100",
        "--model-load-gpu-limit=1:0.5",
        "--trace-config=level=OFF",
        "--trace-level=false",
        "--trace-count",
        "-1",
        "--host-policy=gpu0,cpu-cores=0-3",
        "--http-restricted-api=model-repository,health:admin-key=secret",
    ]);
    assert_eq!(o.repository.model_control_mode, ModelControlMode::Poll);
    assert_eq!(o.logging.log_verbose, 1);
    assert_eq!(o.logging.log_format, LogFormat::Iso8601);
    assert_eq!(
        o.grpc.grpc_infer_response_compression_level,
        GrpcCompressionLevel::Medium
    );
    assert_eq!(o.rate_limiter.rate_limit, RateLimitMode::ExecutionCount);
    let resource = RateLimitResource {
        name: "R1".into(),
        count: 2,
        device: Some(0),
    };
    assert_eq!(o.rate_limiter.rate_limit_resource, [resource]);
    assert_eq!(
        o.sagemaker.sagemaker_safe_port_range,
        Some(PortRange {
            first: 9000,
            last: 9100
        })
    );
    assert_eq!(
        o.memory.model_load_gpu_limit,
        [PerDevice {
            device: 1,
            value: 0.5
        }]
    );
    let trace = TraceConfig {
        mode: None,
        setting: "level".into(),
        value: "OFF".into(),
    };
    assert_eq!(o.trace.trace_config, [trace]);
    assert_eq!(o.trace.trace_level, [TraceLevel::Off]);
    assert_eq!(o.trace.trace_count, -1);
    let policy = NamedSetting {
        name: "gpu0".into(),
        setting: "cpu-cores".into(),
        value: "0-3".into(),
    };
    assert_eq!(o.memory.host_policy, [policy]);
    let restricted = RestrictedApi {
        apis: vec!["model-repository".into(), "health".into()],
        header: "admin-key".into(),
        value: "secret".into(),
    };
    assert_eq!(o.http.http_restricted_api, [restricted]);
}

#[test]
fn log_verbose_takes_levels_and_booleans() {
    let level = |text: &str| {
        serve(&["--model-repository=/m", &format!("--log-verbose={text}")])
            .logging
            .log_verbose
    };
    assert_eq!(
        (level("0"), level("2"), level("TRUE"), level("false")),
        (0, 2, 1, 0)
    );
    let err = error(&["--model-repository=/m", "--log-verbose=loud"]);
    assert!(err.to_string().contains("verbose level"), "{err}");
}

#[test]
fn log_level_filter_follows_the_flags() {
    let logging = |args: &[&str]| {
        let mut all = vec!["--model-repository=/m"];
        all.extend(args);
        serve(&all).logging
    };
    assert_eq!(logging(&[]).max_level(), log::LevelFilter::Info);
    assert_eq!(
        logging(&["--log-verbose=1"]).max_level(),
        log::LevelFilter::Debug
    );
    assert_eq!(
        logging(&["--log-verbose=2"]).max_level(),
        log::LevelFilter::Trace
    );
    let quiet = logging(&["--log-info=false", "--log-warning=false"]);
    assert_eq!(quiet.max_level(), log::LevelFilter::Error);
    assert!(!quiet.enabled(log::Level::Info) && quiet.enabled(log::Level::Error));
    let silent = logging(&["--log-info=0", "--log-warning=0", "--log-error=0"]);
    assert_eq!(silent.max_level(), log::LevelFilter::Off);
}

#[test]
fn a_bad_control_mode_names_the_choices() {
    let err = error(&["--model-repository=/m", "--model-control-mode=sometimes"]);
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    let message = err.to_string();
    assert!(
        message.contains("sometimes") && message.contains("none, poll, explicit"),
        "{message}"
    );
    assert_eq!(ModelControlMode::Explicit.table_name(), "MODE_EXPLICIT");
}

#[test]
fn backend_config_shapes() {
    let parse = |text: &str| text.parse::<BackendConfig>();
    let config = |backend: Option<&str>, setting: &str, value: &str| BackendConfig {
        backend: backend.map(str::to_string),
        setting: setting.to_string(),
        value: value.to_string(),
    };
    assert_eq!(
        parse("python,shm-default-byte-size=1024"),
        Ok(config(Some("python"), "shm-default-byte-size", "1024"))
    );
    assert_eq!(
        parse("default-max-batch-size=8"),
        Ok(config(None, "default-max-batch-size", "8"))
    );
    assert_eq!(
        parse("onnxruntime,x=a=b,c"),
        Ok(config(Some("onnxruntime"), "x", "a=b,c"))
    );
    for bad in [
        "python",
        "python,setting",
        ",x=1",
        "python,=1",
        "python,x=",
        "=1",
        "",
    ] {
        let err = parse(bad).expect_err(bad);
        assert!(err.contains("<backend>,<setting>=<value>"), "{bad}: {err}");
    }
    let err = error(&["--model-repository=/m", "--backend-config=python"]);
    assert_eq!(err.kind(), ErrorKind::ValueValidation);
    assert!(err.to_string().contains("--backend-config"), "{err}");
}

#[test]
fn other_setting_shapes() {
    assert!("local".parse::<NamedSetting>().is_err());
    assert!(
        "size=1".parse::<NamedSetting>().is_err(),
        "a cache name is required"
    );
    assert!("a,b=1".parse::<MetricsConfig>().is_err());
    assert!("jaeger,rate=1".parse::<TraceConfig>().is_err());
    let trace: TraceConfig = "OpenTelemetry,url=localhost:4318".parse().unwrap();
    assert_eq!(trace.mode, Some(TraceMode::Opentelemetry));
    assert!("health:key".parse::<RestrictedApi>().is_err());
    for bad in ["R1", "R1:x", "R1:1:2:3", "R1:1:-1"] {
        assert!(bad.parse::<RateLimitResource>().is_err(), "{bad}");
    }
    assert!("0".parse::<PerDevice<u64>>().is_err());
    assert!("x:1".parse::<PerDevice<u64>>().is_err());
    assert!("9000".parse::<PortRange>().is_err());
}

#[test]
fn numbers_are_checked() {
    assert_eq!(
        error(&["--model-repository=/m", "--http-port=70000"]).kind(),
        ErrorKind::ValueValidation
    );
    assert_eq!(
        error(&["--model-repository=/m", "--http-port=abc"]).kind(),
        ErrorKind::ValueValidation
    );
    assert_eq!(
        error(&["--model-repository=/m", "--exit-timeout-secs=-1"]).kind(),
        ErrorKind::ValueValidation
    );
}
