//! API tokens, stored as sha256 hashes of the secret.

use podium_types::Timestamp;
use podium_types::{TenantId, TokenId};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use sqlx::Row;

use super::{Datastore, StoreError, moment, moment_opt};

use podium_types::Role;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRow {
    pub id: TokenId,
    pub role: Role,
    pub tenant_id: Option<TenantId>,
    pub read_only: bool,
    pub description: String,
    pub expires_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
}

const COLUMNS: &str =
    "id, role, tenant_id, read_only, description, expires_at, created_at, revoked_at";

pub(super) fn row(r: &sqlx::any::AnyRow) -> Result<TokenRow, StoreError> {
    Ok(TokenRow {
        id: r.try_get::<String, _>("id")?.into(),
        role: r.try_get::<String, _>("role")?.parse::<Role>()?,
        tenant_id: r.try_get::<Option<String>, _>("tenant_id")?.map(Into::into),
        read_only: r.try_get::<i64, _>("read_only")? != 0,
        description: r.try_get("description")?,
        expires_at: moment_opt(r, "expires_at")?,
        created_at: moment(r, "created_at")?,
        revoked_at: moment_opt(r, "revoked_at")?,
    })
}

impl Datastore {
    pub async fn token_create(&self, token: &TokenRow, hash: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO tokens (id, hash, role, tenant_id, read_only, description, expires_at, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(token.id.as_str())
        .bind(hash)
        .bind(token.role.as_str())
        .bind(token.tenant_id.as_ref().map(|v| v.as_str()))
        .bind(i64::from(token.read_only))
        .bind(&token.description)
        .bind(token.expires_at.map(|t| t.to_string()))
        .bind(token.created_at.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// The token whose secret hashes to `hash`, revoked or not; as read at most
    /// [`TOKEN_CACHE_TTL`] ago (a change made through this process is seen at once).
    pub async fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRow>, StoreError> {
        if let Some(found) = self.tokens.get(hash) {
            self.tokens.lookups.get_or_create(&HIT).inc();
            return Ok(Some(found));
        }
        self.tokens.lookups.get_or_create(&MISS).inc();
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM tokens WHERE hash = $1"))
            .bind(hash)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        let found = r.as_ref().map(row).transpose()?;
        if let Some(token) = &found {
            self.tokens.put(hash, token);
        }
        Ok(found)
    }

    /// Adds what the datastore counts (token cache lookups) to `registry`.
    pub fn register_metrics(&self, registry: &mut prometheus_client::registry::Registry) {
        registry.register(
            "podium_token_cache_lookups",
            "Bearer tokens looked up by their hash, by whether the cache had them (hit) or the \
             database was read (miss)",
            self.tokens.lookups.clone(),
        );
    }

    /// Forgets every cached token: after any change to tokens.
    pub(super) fn tokens_changed(&self) {
        self.tokens.clear();
    }

    /// Whether any admin token (revoked or not) exists: false only on a fresh database.
    pub async fn admin_token_exists(&self) -> Result<bool, StoreError> {
        let r = sqlx::query("SELECT COUNT(*) AS n FROM tokens WHERE role = 'admin'")
            .fetch_one(&mut *self.reader().await?)
            .await?;
        Ok(r.try_get::<i64, _>("n")? > 0)
    }
}

/// How long a token read by its hash is used without reading it again. A revocation made
/// through another process (on the same PostgreSQL database) takes effect within this; one made
/// through this process, at once.
pub(super) const TOKEN_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(1);

/// The most tokens kept; past it the cache starts again empty.
const TOKEN_CACHE_MAX: usize = 10_000;

/// Tokens by hash, with when they were read, and how often a lookup found one.
#[derive(Debug, Default)]
pub(super) struct TokenCache {
    tokens: std::sync::Mutex<std::collections::HashMap<String, (TokenRow, std::time::Instant)>>,
    lookups: Family<CacheLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    result: &'static str,
}

const HIT: CacheLabels = CacheLabels { result: "hit" };
const MISS: CacheLabels = CacheLabels { result: "miss" };

impl TokenCache {
    fn get(&self, hash: &str) -> Option<TokenRow> {
        let cache = self.tokens.lock().expect("token cache poisoned");
        cache
            .get(hash)
            .filter(|(_, at)| at.elapsed() < TOKEN_CACHE_TTL)
            .map(|(token, _)| token.clone())
    }

    fn put(&self, hash: &str, token: &TokenRow) {
        let mut cache = self.tokens.lock().expect("token cache poisoned");
        if cache.len() >= TOKEN_CACHE_MAX {
            cache.clear();
        }
        cache.insert(hash.to_owned(), (token.clone(), std::time::Instant::now()));
    }

    fn clear(&self) {
        self.tokens.lock().expect("token cache poisoned").clear();
    }
}
