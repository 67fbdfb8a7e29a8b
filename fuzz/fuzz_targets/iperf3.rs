//! Any bytes, in any chunks, into both iperf3 machines, with the server's and
//! client's actions taken whenever the machines ask for them: they fail with a
//! typed error or go on, never panic, never buffer past their limits, and a
//! failed session stays over.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsonde_proto::iperf3::{
    ClientMachine, Cookie, Iperf3Event, Params, Results, ServerMachine, MAX_RESULTS,
};

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(chunk).max(1);
    let mut server = ServerMachine::new();
    let mut client = ClientMachine::new(Cookie::from_random([1; 36]), Params::default());
    for piece in rest.chunks(chunk) {
        server.feed(piece);
        client.feed(piece);
        while let Some(ev) = server.poll() {
            match ev {
                Iperf3Event::Cookie(_) => server.accept(),
                Iperf3Event::Params(p) => {
                    let _ = p.to_spec();
                    server.create_streams();
                    server.start();
                }
                Iperf3Event::TestEnd => server.exchange_results(),
                Iperf3Event::PeerResults(_) => server.send_results(&Results::default()),
                Iperf3Event::Failed(_) => assert!(server.is_over()),
                _ => {}
            }
        }
        while let Some(ev) = client.poll() {
            match ev {
                Iperf3Event::ExchangeResults => client.send_results(&Results::default()),
                Iperf3Event::Failed(_) => assert!(client.is_over()),
                _ => {}
            }
        }
        let _ = server.take_output();
        let _ = client.take_output();
    }
    let _ = MAX_RESULTS;
});
