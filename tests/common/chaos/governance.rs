//! Governance traffic: a fresh key applies for a publisher group, and
//! three genesis validators vote to admit it. A group whose application
//! committed is admitted before the loop ends (bounded), so the oracle
//! can read every applied group and every committed vote.

use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use rand::rngs::StdRng;
use rand::Rng;
use stave::client::StaveClient;
use stave::keyspaces::groups::{ApplyGroup, VoteGroup};
use stave::proto::governance::{ElectionKind, GroupRequest};
use stave::proto::query::AccountRequest;
use stave::tx::{build::sign_tx, Action};

use super::traffic::{Effect, Traffic};
use crate::common::rights::{operator, set_key};

/// Applications left open at once (the chain allows 16).
const MAX_PENDING: usize = 4;
/// How long the loop goes on admitting pending groups after `until`.
const FINISH: Duration = Duration::from_secs(120);

impl Traffic {
    pub(super) async fn governance_loop(self, mut rng: StdRng, until: Instant) {
        let voters: Vec<SigningKey> = (0..3).map(|i| operator(&self.net, i)).collect();
        let mut pending: Vec<String> = Vec::new();
        for n in 0..10_000u64 {
            if Instant::now() >= until {
                break;
            }
            if pending.len() < MAX_PENDING {
                if let Some(g) = self.apply(&mut rng, n).await {
                    pending.push(g);
                }
            }
            self.admit(&mut rng, &voters, &mut pending).await;
            tokio::time::sleep(Duration::from_millis(rng.gen_range(500..1500))).await;
        }
        let deadline = Instant::now() + FINISH;
        while !pending.is_empty() && Instant::now() < deadline {
            self.admit(&mut rng, &voters, &mut pending).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        if !pending.is_empty() {
            eprintln!("[chaos] governance: groups {pending:?} not admitted within {FINISH:?}");
        }
    }

    /// ApplyGroup by a fresh key; the group id if it committed.
    async fn apply(&self, rng: &mut StdRng, n: u64) -> Option<String> {
        let key = SigningKey::generate(rng);
        let group_id = format!("chaos-{}-g{n}", self.seed);
        let a = Action::ApplyGroup(ApplyGroup {
            group_id: group_id.clone(),
            takedown_authorities: vec![set_key(&key)],
            members: vec![],
        });
        let tx = sign_tx(&key, &self.net.chain_id, 0, vec![a], "");
        let effect = Effect::GroupApplied {
            group_id: group_id.clone(),
            applicant: set_key(&key),
        };
        let node = self.pick(rng);
        self.send("governance", node, tx, effect)
            .await
            .ok()
            .map(|_| group_id)
    }

    /// One round of votes for each pending group; drops admitted ones.
    async fn admit(&self, rng: &mut StdRng, voters: &[SigningKey], pending: &mut Vec<String>) {
        let mut still = Vec::new();
        for g in pending.drain(..) {
            for v in voters {
                if self.admitted(rng, &g).await {
                    break;
                }
                self.vote(rng, v, &g).await;
            }
            if !self.admitted(rng, &g).await {
                still.push(g);
            }
        }
        *pending = still;
    }

    async fn admitted(&self, rng: &mut StdRng, group_id: &str) -> bool {
        let node = self.pick(rng);
        let call = async {
            let mut c = StaveClient::connect(&self.net.grpc_url(node)).await.ok()?;
            let req = GroupRequest {
                group_id: group_id.into(),
                prove: false,
            };
            c.governance
                .group(req)
                .await
                .ok()
                .map(|r| r.into_inner().found)
        };
        matches!(
            tokio::time::timeout(Duration::from_secs(5), call).await,
            Ok(Some(true))
        )
    }

    /// VoteGroup(admit) by `voter`, with its next nonce on the chosen node.
    async fn vote(&self, rng: &mut StdRng, voter: &SigningKey, group_id: &str) {
        let node = self.pick(rng);
        let nonce = async {
            let mut c = StaveClient::connect(&self.net.grpc_url(node)).await.ok()?;
            let req = AccountRequest {
                pubkey: set_key(voter),
                ..Default::default()
            };
            c.query
                .account(req)
                .await
                .ok()
                .map(|r| r.into_inner().next_nonce)
        };
        let Ok(Some(nonce)) = tokio::time::timeout(Duration::from_secs(5), nonce).await else {
            return;
        };
        let a = Action::VoteGroup(VoteGroup {
            group_id: group_id.into(),
            kind: ElectionKind::Admit as i32,
            approve: true,
        });
        let tx = sign_tx(voter, &self.net.chain_id, nonce, vec![a], "");
        let effect = Effect::GroupVote {
            group_id: group_id.into(),
            voter: set_key(voter),
        };
        let _ = self.send("governance", node, tx, effect).await;
    }
}
