/**
 * The Lua scripts the drivers run: each is atomic on the Redis that runs it
 * (and is written to the append-only file as one transaction), so a step
 * that must check then write, or write several keys, is one script. Keys
 * are passed in KEYS; the few built inside a script (split bytes, member
 * heartbeats) carry the same hash tag as a key passed, so they are in the
 * same Redis Cluster slot. Numbers are formatted with %d: Lua's default
 * number formatting switches to exponents past 14 digits.
 */

export interface LuaScript {
  name: string;
  lua: string;
}

/**
 * KEYS: per shard, its seq counter then its stream. ARGV: per shard, its
 * record. Answers each record's seq. A push touching several shards is
 * recorded whole or not at all on one Redis; Redis Cluster refuses a script
 * over several slots, so there the shards of a push would have to share a
 * slot (a tag per group of shards) or be appended one by one with a push id
 * the processor de-duplicates.
 */
export const APPEND: LuaScript = {
  name: 'gnocchiAppend',
  lua: `
local seqs = {}
for i = 1, #ARGV do
  local seq = redis.call('INCR', KEYS[2 * i - 1])
  redis.call('XADD', KEYS[2 * i], string.format('%d-0', seq), 'd', ARGV[i])
  seqs[i] = seq
end
return seqs`,
};

/**
 * One shard's series records of some metrics, as one consistent view.
 * KEYS: states, revisions, then per metric its chunks and split index.
 * ARGV: n, the n metric ids, the number of ranges, per range its metric
 * (1-based), granularity, start and end, then per metric its split prefix.
 * Answers per metric: {state, revision, chunks (field, bytes…), split index
 * (field, version… joined by newlines: one string rather than thousands,
 * which the client parses far faster), splits in the ranges (field,
 * bytes…)}.
 */
export const LOAD: LuaScript = {
  name: 'gnocchiLoad',
  lua: `
local n = tonumber(ARGV[1])
local nranges = tonumber(ARGV[n + 2])
local rangesOf = {}
for r = 0, nranges - 1 do
  local at = n + 3 + 4 * r
  local m = tonumber(ARGV[at])
  rangesOf[m] = rangesOf[m] or {}
  table.insert(rangesOf[m], {tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])})
end
local prefixes = n + 2 + 4 * nranges
local out = {}
for i = 1, n do
  local id = ARGV[1 + i]
  local index = redis.call('HGETALL', KEYS[2 + 2 * i])
  local splits = {}
  local ranges = rangesOf[i]
  if ranges then
    for j = 1, #index, 2 do
      local field = index[j]
      local sep = string.find(field, ':', 1, true)
      local g = tonumber(string.sub(field, 1, sep - 1))
      local k = tonumber(string.sub(field, sep + 1))
      for _, r in ipairs(ranges) do
        if g == r[1] and k >= r[2] and k < r[3] then
          table.insert(splits, field)
          table.insert(splits, redis.call('GET', ARGV[prefixes + i] .. field .. ':' .. index[j + 1]))
          break
        end
      end
    end
  end
  out[i] = {redis.call('HGET', KEYS[1], id), redis.call('HGET', KEYS[2], id), redis.call('HGETALL', KEYS[1 + 2 * i]), table.concat(index, '\\n'), splits}
end
return out`,
};

/**
 * A processing batch's writes on one shard, all or none: refused ({-1})
 * unless the shard's lease still holds the batch's fence, and ({-2, id})
 * when a metric's records were changed since they were loaded (their
 * revision is neither the one loaded nor this commit's own); nothing is
 * written then. A deleted metric's writes are dropped; a metric already at
 * this commit's revision (the same commit run again) is left as it is, so
 * running the script twice changes nothing. Answers {0, positions (1-based)
 * of the metrics dropped, count of metrics already committed, objects
 * superseded (position, field, revision…)}.
 * KEYS: lock, deleted, states, revisions, then per metric its chunks and
 * split index. ARGV: fence, n, then per metric: id, revision loaded ('*':
 * not loaded, any), new revision, split prefix, number of writes, and per
 * write its op, field and value. Ops: S/s put/remove the state, C/c a
 * chunk, P/p a sealed split kept in Redis, O/o a sealed split kept in an
 * object store. A split's bytes are stored under a name holding the
 * revision that wrote them and never overwritten; the index records which
 * name is current. P stores the bytes under the split prefix and deletes
 * the name it replaces. O stores nothing: the object was uploaded under its
 * name before this script, and the name it replaces is answered, for
 * deletion once the commit is applied.
 */
export const COMMIT: LuaScript = {
  name: 'gnocchiCommit',
  lua: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1} end
local n = tonumber(ARGV[2])
local metrics = {}
local at = 3
for i = 1, n do
  local m = {id = ARGV[at], loaded = ARGV[at + 1], rev = ARGV[at + 2], prefix = ARGV[at + 3], writes = tonumber(ARGV[at + 4]), first = at + 5,
    chunks = KEYS[3 + 2 * i], index = KEYS[4 + 2 * i]}
  at = at + 5 + 3 * m.writes
  metrics[i] = m
end
local dropped, again, superseded = {}, 0, {}
for i, m in ipairs(metrics) do
  if redis.call('SISMEMBER', KEYS[2], m.id) == 1 then
    m.skip = true
    table.insert(dropped, i)
  else
    local current = redis.call('HGET', KEYS[4], m.id) or ''
    if current == m.rev then
      m.skip = true
      again = again + 1
    elseif m.loaded ~= '*' and current ~= m.loaded then
      return {-2, m.id}
    end
  end
end
for i, m in ipairs(metrics) do
  if not m.skip then
    for w = m.first, m.first + 3 * (m.writes - 1), 3 do
      local op, field, value = ARGV[w], ARGV[w + 1], ARGV[w + 2]
      if op == 'S' then redis.call('HSET', KEYS[3], m.id, value)
      elseif op == 's' then redis.call('HDEL', KEYS[3], m.id)
      elseif op == 'C' then redis.call('HSET', m.chunks, field, value)
      elseif op == 'c' then redis.call('HDEL', m.chunks, field)
      elseif op == 'O' or op == 'o' then
        local old = redis.call('HGET', m.index, field)
        if old and old ~= m.rev then
          table.insert(superseded, i)
          table.insert(superseded, field)
          table.insert(superseded, old)
        end
        if op == 'O' then redis.call('HSET', m.index, field, m.rev)
        elseif old then redis.call('HDEL', m.index, field) end
      else
        local old = redis.call('HGET', m.index, field)
        if old and old ~= m.rev then redis.call('DEL', m.prefix .. field .. ':' .. old) end
        if op == 'P' then
          redis.call('SET', m.prefix .. field .. ':' .. m.rev, value)
          redis.call('HSET', m.index, field, m.rev)
        elseif old then
          redis.call('DEL', m.prefix .. field .. ':' .. old)
          redis.call('HDEL', m.index, field)
        end
      end
    end
    redis.call('HSET', KEYS[4], m.id, m.rev)
  end
end
return {0, dropped, again, superseded}`,
};

/**
 * Marks a metric deleted and removes its series records: commits computed
 * before are dropped by COMMIT, which checks the mark. Ids are never reused,
 * so the mark is kept. KEYS: deleted, states, revisions, chunks, split
 * index. ARGV: id, split prefix. Answers how many sealed splits it removed.
 */
export const MARK_DELETED: LuaScript = {
  name: 'gnocchiMarkDeleted',
  lua: `
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local index = redis.call('HGETALL', KEYS[5])
for j = 1, #index, 2 do redis.call('DEL', ARGV[2] .. index[j] .. ':' .. index[j + 1]) end
redis.call('DEL', KEYS[4], KEYS[5])
return #index / 2`,
};

/**
 * Which of a shard's split objects (listed in the object store) no commit
 * can reference any more: those of a deleted metric, and those the metric's
 * index does not name whose commit ran under a fence older than the shard's
 * epoch. The lease only moves to a newer fence, so a commit under an older
 * one is refused from then on, and one applied already shows in the index
 * read here, in the same instant. Objects of the current fence are left:
 * its holder's commits may still be on their way. KEYS: deleted, epoch,
 * then per metric its split index. ARGV: n, the n metric ids, then per
 * object its metric (1-based), field, revision and fence. Answers {epoch,
 * positions (1-based) of the objects to delete}.
 */
export const SWEEP: LuaScript = {
  name: 'gnocchiSweep',
  lua: `
local epoch = tonumber(redis.call('GET', KEYS[2]) or '0')
local n = tonumber(ARGV[1])
local deleted = {}
for i = 1, n do deleted[i] = redis.call('SISMEMBER', KEYS[1], ARGV[1 + i]) == 1 end
local out = {}
local position = 0
for at = n + 2, #ARGV, 4 do
  position = position + 1
  local m, field, rev, fence = tonumber(ARGV[at]), ARGV[at + 1], ARGV[at + 2], tonumber(ARGV[at + 3])
  if deleted[m] or (fence < epoch and redis.call('HGET', KEYS[2 + m], field) ~= rev) then table.insert(out, position) end
end
return {epoch, out}`,
};

/**
 * Takes a shard's lease if nobody holds it: the fence is the shard's epoch,
 * incremented, and the lease's value. KEYS: lock, epoch. ARGV: ttl (ms).
 * Answers the fence, or nil.
 */
export const LOCK: LuaScript = {
  name: 'gnocchiLock',
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local fence = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], string.format('%d', fence), 'PX', ARGV[1])
return fence`,
};

/** Extends a lease still held under this fence. KEYS: lock. ARGV: fence, ttl (ms). Answers 1, or 0 once lost. */
export const RENEW: LuaScript = {
  name: 'gnocchiRenew',
  lua: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
};

/** Gives a lease back if still held under this fence. KEYS: lock. ARGV: fence. */
export const RELEASE: LuaScript = {
  name: 'gnocchiRelease',
  lua: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
};

/**
 * A node's heartbeat, and the live members: those whose heartbeat has not
 * expired (the others are forgotten). KEYS: members, this node's heartbeat.
 * ARGV: node id, ttl (ms), heartbeat key prefix.
 */
export const HEARTBEAT: LuaScript = {
  name: 'gnocchiHeartbeat',
  lua: `
redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[2])
redis.call('SADD', KEYS[1], ARGV[1])
local live = {}
for _, node in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[3] .. node) == 1 then table.insert(live, node) else redis.call('SREM', KEYS[1], node) end
end
return live`,
};

/** Raises a shard's hurry mark, never lowers it. KEYS: the hurry hash. ARGV: shard, seq. */
export const HURRY: LuaScript = {
  name: 'gnocchiHurry',
  lua: `
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > current then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1`,
};

/**
 * Raises the series format stamp to this node's, never lowers it.
 * KEYS: the stamp. ARGV: this node's format. Answers the stamp as found
 * (0 when absent).
 */
export const CLAIM_FORMAT: LuaScript = {
  name: 'gnocchiClaimFormat',
  lua: `
local found = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > found then redis.call('SET', KEYS[1], ARGV[1]) end
return found`,
};

export const SCRIPTS: readonly LuaScript[] = [APPEND, LOAD, COMMIT, MARK_DELETED, SWEEP, LOCK, RENEW, RELEASE, HEARTBEAT, HURRY, CLAIM_FORMAT];
