use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use super::*;

/// An EndpointSliceList as the API answers it (trimmed of fields not read):
/// the agents' Service on three nodes, one pod not ready, the same pods again
/// in an IPv6 slice (a dual-stack Service), and a slice that is not an
/// address family.
const SLICES: &str = r#"{
  "kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1",
  "metadata": {"resourceVersion": "91733"},
  "items": [
    {"metadata": {"name": "netsonde-agents-6v2pk", "namespace": "netsonde",
                  "labels": {"kubernetes.io/service-name": "netsonde-agents"}},
     "addressType": "IPv6",
     "endpoints": [
       {"addresses": ["fd00:10:244:1::5"], "conditions": {"ready": true},
        "nodeName": "node-b", "targetRef": {"kind": "Pod", "name": "netsonde-agent-q8x2c"}}],
     "ports": [{"name": "control", "port": 5300, "protocol": "TCP"}]},
    {"metadata": {"name": "netsonde-agents-x7k2p", "namespace": "netsonde",
                  "labels": {"kubernetes.io/service-name": "netsonde-agents"}},
     "addressType": "IPv4",
     "endpoints": [
       {"addresses": ["10.244.1.5"], "conditions": {"ready": true, "serving": true},
        "nodeName": "node-b", "targetRef": {"kind": "Pod", "name": "netsonde-agent-q8x2c"}},
       {"addresses": ["10.244.0.7"], "conditions": {"ready": true},
        "nodeName": "node-a", "targetRef": {"kind": "Pod", "name": "netsonde-agent-2mfj9"}},
       {"addresses": ["10.244.2.9"], "conditions": {"ready": false},
        "nodeName": "node-c", "targetRef": {"kind": "Pod", "name": "netsonde-agent-hz4tw"}},
       {"addresses": ["10.244.2.11"],
        "nodeName": "node-d", "targetRef": {"kind": "Pod", "name": "netsonde-agent-p0d1e"}}],
     "ports": [{"name": "metrics", "port": 9300, "protocol": "TCP"},
               {"name": "control", "port": 5300, "protocol": "TCP"}]},
    {"metadata": {"name": "netsonde-agents-fqdn"}, "addressType": "FQDN",
     "endpoints": [{"addresses": ["agent.example"]}]}
  ]
}"#;

#[test]
fn a_service_is_named_as_namespace_name_and_port() {
    let s: ServiceRef = "netsonde/netsonde-agents:5301".parse().unwrap();
    assert_eq!(
        s,
        ServiceRef {
            namespace: Some("netsonde".into()),
            name: "netsonde-agents".into(),
            port: Some(5301)
        }
    );
    let s: ServiceRef = "netsonde-agents".parse().unwrap();
    assert_eq!((s.namespace, s.port), (None, None));
    for bad in [
        "", "ns/", "/svc", "Svc", "svc:0", "svc:x", "a/b/c", "svc.ns",
    ] {
        let e = bad.parse::<ServiceRef>().unwrap_err();
        assert!(
            e.to_string().contains("[NAMESPACE/]SERVICE[:PORT]"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn ready_endpoints_are_agents_named_by_their_node() {
    let list: SliceList = serde_json::from_str(SLICES).unwrap();
    // node-c's pod is not ready; node-b's is in both families, kept once, on
    // IPv4; node-d's says nothing of readiness, which the API says means ready.
    assert_eq!(
        agents_of(&list, None, 1),
        vec![
            "node-a=10.244.0.7:5300",
            "node-b=10.244.1.5:5300",
            "node-d=10.244.2.11:5300"
        ]
    );
    // A port given wins over the endpoints'.
    assert_eq!(agents_of(&list, Some(7), 1)[0], "node-a=10.244.0.7:7");
    for a in agents_of(&list, None, 1) {
        assert!(netsonde_sweep::mesh::Agent::parse(&a, 1).is_ok(), "{a}");
    }
    // Two agents on one node are told apart by their pods; one without a node
    // or pod by its address; an IPv6-only one is bracketed.
    let two: SliceList = serde_json::from_str(
        r#"{"items": [{"addressType": "IPv6", "endpoints": [
            {"addresses": ["fd00::1"], "nodeName": "n1", "targetRef": {"name": "p1"}},
            {"addresses": ["fd00::2"], "nodeName": "n1", "targetRef": {"name": "p2"}},
            {"addresses": ["fd00::3"]}],
           "ports": [{"port": 5301}]}]}"#,
    )
    .unwrap();
    assert_eq!(
        agents_of(&two, None, 1),
        vec![
            "fd00::3=[fd00::3]:5301",
            "p1=[fd00::1]:5301",
            "p2=[fd00::2]:5301"
        ]
    );
}

/// A stand-in for the API server, over TLS with a certificate for 127.0.0.1
/// signed by a CA of its own: answers one request with `status` and `body`,
/// and hands back the request's head.
fn api(status: u16, body: &'static str) -> (Access, std::thread::JoinHandle<String>) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
        )
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let conn = rustls::ServerConnection::new(Arc::new(config)).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && tls.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let answer = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = tls.write_all(answer.as_bytes());
        tls.conn.send_close_notify();
        let _ = tls.flush();
        String::from_utf8_lossy(&head).into_owned()
    });
    let dir = std::env::temp_dir().join(format!("netsonde-sa-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("token"), "tok3n\n").unwrap();
    std::fs::write(dir.join("ca.crt"), ca_pem).unwrap();
    std::fs::write(dir.join("namespace"), "netsonde").unwrap();
    let access = Access::at("127.0.0.1", &port.to_string(), &dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (access, server)
}

#[test]
fn the_api_is_asked_for_the_service_s_slices_with_the_pod_s_token() {
    let (access, server) = api(200, SLICES);
    assert_eq!(access.namespace, "netsonde");
    let svc: ServiceRef = "netsonde-agents".parse().unwrap();
    let agents = access.agents(&svc, 1).unwrap();
    assert_eq!(agents.len(), 3, "{agents:?}");
    let head = server.join().unwrap();
    assert!(
        head.starts_with(
            "GET /apis/discovery.k8s.io/v1/namespaces/netsonde/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dnetsonde-agents "
        ),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("authorization: bearer tok3n\r\n"),
        "{head}"
    );
}

#[test]
fn a_refusal_says_what_to_grant_and_an_empty_service_says_so() {
    let (access, server) = api(
        403,
        r#"{"kind":"Status","message":"endpointslices.discovery.k8s.io is forbidden"}"#,
    );
    let svc: ServiceRef = "other/netsonde-agents".parse().unwrap();
    let e = access.agents(&svc, 1).unwrap_err().to_string();
    assert!(e.contains("answered 403"), "{e}");
    assert!(e.contains("rbac.yaml") && e.contains("is forbidden"), "{e}");
    assert!(server.join().unwrap().contains("/namespaces/other/"));
    let (access, _server) = api(200, r#"{"items": []}"#);
    let e = access.agents(&svc, 1).unwrap_err().to_string();
    assert!(e.contains("no ready endpoint"), "{e}");
    let (access, _server) = api(200, "<html>proxy</html>");
    let e = access.agents(&svc, 1).unwrap_err().to_string();
    assert!(
        e.starts_with("the Kubernetes API's EndpointSlices of other/netsonde-agents:"),
        "{e}"
    );
}

#[test]
fn an_api_whose_certificate_the_pod_s_ca_did_not_sign_is_not_trusted() {
    let (mut access, server) = api(200, SLICES);
    let (other, _) = api(200, SLICES);
    access.ca_pem = other.ca_pem;
    let e = access
        .agents(&"netsonde-agents".parse().unwrap(), 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("the Kubernetes API at https://127.0.0.1:"),
        "{e}"
    );
    assert!(e.contains("invalid peer certificate"), "{e}");
    drop(server);
}

#[test]
fn outside_a_pod_the_error_says_where_to_run() {
    let dir = std::env::temp_dir().join("netsonde-no-such-serviceaccount");
    let e = Access::at("10.96.0.1", "443", &dir)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no service account token") && e.contains("--agents-dns"),
        "{e}"
    );
}
