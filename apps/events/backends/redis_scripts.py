"""The Lua scripts of the Redis event queues (redis.py): each operation is one script, so it is
atomic and costs one round trip. Keys (prefix P):

    P:eq:<queue>        hash: user, realm, types, options, lifespan, created, next (event id),
                        pruned (newest acknowledged id), poll (how many polls the queue has had),
                        process (where the latest poll began)
    P:eq:<queue>:ev     sorted set: the queue's events as JSON, scored by their id
    P:eq:<queue>:ob     hash: organization event seq -> event id, kept until the queue's initial
                        state is known (see exclude)
    P:uq:<user>         hash: queue -> "event types|created|key TTL|state seq", the user's queues
                        (publishing walks it; events up to "state seq" are in the initial state;
                        -2 while that state is being read, 0 for a queue without one)
    P:eq:rseq:<realm>   the organization's newest published event seq (events go out in seq order)
    P:rq:<realm>        set: users of the organization who registered a queue (an organization-wide
                        event, or one for more users than it holds, walks it instead of a list of
                        ids; a user is removed when such an event finds none of their queues
                        left); its TTL is refreshed as P:uq's
    P:eq:expiry         sorted set: queue -> time it expires unless polled again (the sweep reads it)
    P:eq:notify         channel: "e q1:id1 q2:id2<newline><event>": an event, its id in each queue;
                        "d q1" deleted, "r q1" q1 has an event the notification cannot carry
                        (read the queue), "t q 7" poll number 7 began on q (earlier ones end; sent
                        when the poll before it began in another process),
                        "a u:5 r:2" credentials of user 5 / organization 2 changed
    P:ratelimit:events_by_user:<user>   the user's polls in the rate limit's window, counted by the
                        poll's own script (apps/core/ratelimit.py's sliding window)
"""

import hashlib

from apps.core.ratelimit import SLIDING_WINDOW_LUA_FUNCTION

PRELUDE = (
    SLIDING_WINDOW_LUA_FUNCTION
    + """
local p = ARGV[1]
local notify = p .. ':eq:notify'
local expiry = p .. ':eq:expiry'
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function qkey(qid) return p .. ':eq:' .. qid end
local function drop(qid, uid)
  local k = qkey(qid)
  if not uid then uid = redis.call('HGET', k, 'user') end
  redis.call('DEL', k, k .. ':ev', k .. ':ob')
  if uid then redis.call('HDEL', p .. ':uq:' .. uid, qid) end
  redis.call('ZREM', expiry, qid)
end
local function entry_fields(entry)
  return string.match(entry, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
end
local function keep(qid, seconds)
  local k = qkey(qid)
  for _, key in ipairs({k, k .. ':ev', k .. ':ob'}) do
    redis.call('EXPIRE', key, math.ceil(seconds))
  end
end
"""
)

# ARGV: prefix, queue, user, realm, types, options, lifespan, max_per_user, backstop, longest queue life,
# state seq (-2: an initial state is being read, exclude will say which events it holds; 0: none)
_CREATE = """
local qid, uid, lifespan = ARGV[2], ARGV[3], tonumber(ARGV[7])
local uq = p .. ':uq:' .. uid
local live = {}
for _, q in ipairs(redis.call('HKEYS', uq)) do
  local score = redis.call('ZSCORE', expiry, q)
  local life = redis.call('HGET', qkey(q), 'lifespan')
  if score and life then
    -- When it was last used: its expiry less its lifespan (a waiting poll's lease counts as use).
    table.insert(live, {q, tonumber(score) - tonumber(life)})
  else
    redis.call('HDEL', uq, q)
  end
end
table.sort(live, function(a, b) return a[2] < b[2] end)
local evicted = {}
local i = 1
while #live - #evicted >= tonumber(ARGV[8]) do
  drop(live[i][1], uid)
  table.insert(evicted, live[i][1])
  i = i + 1
end
local t = now()
redis.call('HSET', qkey(qid), 'user', uid, 'realm', ARGV[4], 'types', ARGV[5], 'options', ARGV[6],
  'lifespan', lifespan, 'created', t, 'next', 0, 'pruned', -1)
keep(qid, lifespan + tonumber(ARGV[9]))
redis.call('HSET', uq, qid, ARGV[5] .. '|' .. t .. '|' .. (lifespan + tonumber(ARGV[9]) + 60) .. '|' .. ARGV[11])
redis.call('EXPIRE', uq, tonumber(ARGV[10]) + tonumber(ARGV[9]))
redis.call('SADD', p .. ':rq:' .. ARGV[4], uid)
redis.call('EXPIRE', p .. ':rq:' .. ARGV[4], tonumber(ARGV[10]) + tonumber(ARGV[9]))
redis.call('ZADD', expiry, t + lifespan, qid)
if #evicted > 0 then redis.call('PUBLISH', notify, 'd ' .. table.concat(evicted, ' ')) end
return evicted
"""

# ARGV: prefix, payload, event type, realm, seq, force (1/0), max events, deletion span, then the
# audience: user ids, or "*" (every user in the organization's index) and the user ids left out
_PUBLISH = """
local payload, etype, seq = ARGV[2], ',' .. ARGV[3] .. ',', tonumber(ARGV[5])
local rseq = p .. ':eq:rseq:' .. ARGV[4]
local rq = p .. ':rq:' .. ARGV[4]
-- None published yet counts as 0: an organization's first event is 1, and a later one cannot
-- overtake it (its publish failed while queues were waiting for it).
local last = tonumber(redis.call('GET', rseq) or '0')
if seq <= last then return {'DUP', last} end
if seq > last + 1 and ARGV[6] ~= '1' then return {'GAP', last} end
redis.call('SET', rseq, seq, 'EX', 7 * 24 * 3600)
local max_events, span = tonumber(ARGV[7]), tonumber(ARGV[8])
local event_tail = string.sub(payload, 2)
local t = now()
local woken, evicted, reread = {}, {}, {}
-- Whether the queue's client takes deletions one message at a time (see deletion_span).
local function one_by_one(k)
  local options = redis.call('HGET', k, 'options')
  if not options then return false end
  local capabilities = cjson.decode(options)['client_capabilities']
  return not (type(capabilities) == 'table' and capabilities['bulk_message_deletion'] == true)
end
local everyone = ARGV[9] == '*'
-- A list longer than the organization's index (its users with queues: a big channel's message, a
-- tenth of whose people have the app open) is looked up in the index rather than user by user.
local by_index = everyone or #ARGV - 8 > redis.call('SCARD', rq)
local function deliver(uid)
  local uq = p .. ':uq:' .. uid
  local entries = redis.call('HGETALL', uq)
  -- The organization's index keeps a user until an event walking it finds no queue of theirs.
  if by_index and #entries == 0 then redis.call('SREM', rq, uid) end
  for j = 1, #entries, 2 do
    local qid = entries[j]
    local types, created, ttl, since = entry_fields(entries[j + 1])
    local state_seq = tonumber(since)
    if (types == '*' or string.find(types, etype, 1, true)) and seq > state_seq then
      local k = qkey(qid)
      local ids = 1
      if span > 1 and one_by_one(k) then ids = span end
      local eid = redis.call('HINCRBY', k, 'next', ids) - 1
      if eid == ids - 1 and redis.call('HEXISTS', k, 'user') == 0 then
        -- The queue expired (its keys' TTL) while still listed: forget it.
        redis.call('DEL', k)
        redis.call('HDEL', uq, qid)
        eid = nil
      end
      if eid then
        local spanned = ''
        if ids > 1 then spanned = '"span": ' .. ids .. ', ' end
        redis.call('ZADD', k .. ':ev', eid, '{"id": ' .. eid .. ', ' .. spanned .. event_tail)
        local queued = redis.call('ZCARD', k .. ':ev')
        -- A new key (the queue was empty) needs its TTL; polls refresh it later (see keep).
        if queued == 1 then redis.call('EXPIRE', k .. ':ev', ttl) end
        -- Only a queue whose initial state is being read (-2) keeps track of which event went
        -- where. -1 is what the previous version wrote for every new queue, relying on their
        -- first 30 s instead: kept while both versions may serve one Redis (during a deploy).
        if state_seq == -2 or (state_seq == -1 and t - tonumber(created) < 30) then
          redis.call('HSET', k .. ':ob', seq, eid)
          redis.call('EXPIRE', k .. ':ob', redis.call('TTL', k))
        end
        if queued > max_events then
          drop(qid, uid)
          table.insert(evicted, qid)
        elseif ids > 1 then
          table.insert(reread, qid)  -- the notification carries the event without its span
        else
          table.insert(woken, qid .. ':' .. eid)
        end
      end
    end
  end
end
if by_index then
  local listed = {}
  for i = everyone and 10 or 9, #ARGV do listed[ARGV[i]] = true end
  for _, uid in ipairs(redis.call('SMEMBERS', rq)) do
    if (listed[uid] == nil) == everyone then deliver(uid) end
  end
else
  for i = 9, #ARGV do deliver(ARGV[i]) end
end
local reached = #woken + #reread
-- The last target, "published:<ms>", says when (for the wake latency metric); a listener of the
-- previous version takes it for a queue named "published", which no poll waits on.
if #woken > 0 then
  table.insert(woken, 'published:' .. string.format('%d', math.floor(t * 1000)))
  redis.call('PUBLISH', notify, 'e ' .. table.concat(woken, ' ') .. '\\n' .. payload)
end
if #reread > 0 then redis.call('PUBLISH', notify, 'r ' .. table.concat(reread, ' ')) end
if #evicted > 0 then redis.call('PUBLISH', notify, 'd ' .. table.concat(evicted, ' ')) end
return {'OK', reached, #evicted}
"""

# ARGV: prefix, queue, user, last event id, lease seconds (the poll's longest wait), backstop, longest queue life,
# the polling process, then the rate limit the poll counts against: its key ('' for none), window (ms), count,
# and a name for this hit. Every answer carries the rate limit's sliding_window() answer ({} for none).
_BEGIN_POLL = """
local qid, last, lease = ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[5])
local t = now()
local counted = {}
if ARGV[9] ~= '' then
  local key = p .. ':ratelimit:' .. ARGV[9]
  counted = sliding_window(key, tonumber(ARGV[10]), tonumber(ARGV[11]), ARGV[12], true, math.floor(t * 1000))
  if counted[1] == 0 then return {'LIMITED', counted} end
end
local k = qkey(qid)
local q = redis.call('HMGET', k, 'user', 'pruned', 'lifespan', 'options', 'process', 'realm')
if not q[1] or q[1] ~= ARGV[3] then return {'BAD', counted} end
-- A queue the previous version created is not in its organization's index: its polls put it there.
if q[6] then
  redis.call('SADD', p .. ':rq:' .. q[6], q[1])
  redis.call('EXPIRE', p .. ':rq:' .. q[6], tonumber(ARGV[7]) + tonumber(ARGV[6]))
end
local pruned = tonumber(q[2])
if last < pruned then return {'PRUNED', counted} end
local top = redis.call('ZREVRANGEBYSCORE', k .. ':ev', last, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
local newest = pruned
if #top > 0 then newest = tonumber(top[2]) end
if last ~= newest then return {'NOTIN', counted} end
if #top > 0 then
  redis.call('ZREMRANGEBYSCORE', k .. ':ev', '-inf', last)
  redis.call('HSET', k, 'pruned', last)
end
local lifespan = tonumber(q[3])
redis.call('ZADD', expiry, t + lifespan + lease, qid)
keep(qid, lifespan + lease + tonumber(ARGV[6]))
redis.call('EXPIRE', p .. ':uq:' .. ARGV[3], tonumber(ARGV[7]) + tonumber(ARGV[6]))
local number = redis.call('HINCRBY', k, 'poll', 1)
-- The process of this poll ends its own earlier polls; others hear of it.
if q[5] ~= ARGV[8] then
  redis.call('HSET', k, 'process', ARGV[8])
  redis.call('PUBLISH', notify, 't ' .. qid .. ' ' .. number)
end
return {'OK', counted, q[4], redis.call('ZRANGEBYSCORE', k .. ':ev', '(' .. last, '+inf'), number}
"""

# ARGV: prefix, then the rate limit's key, window (ms), count and a name for this hit
_COUNT_POLL = """
return sliding_window(p .. ':ratelimit:' .. ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], true)
"""

# ARGV: prefix, queue, user, last event id
_HEARTBEAT = """
local k = qkey(ARGV[2])
if redis.call('HGET', k, 'user') ~= ARGV[3] then return {'BAD'} end
local eid = redis.call('HINCRBY', k, 'next', 1) - 1
redis.call('ZADD', k .. ':ev', eid, '{"id": ' .. eid .. ', "type": "heartbeat"}')
redis.call('EXPIRE', k .. ':ev', redis.call('TTL', k))
return {'OK', redis.call('ZRANGEBYSCORE', k .. ':ev', '(' .. ARGV[4], '+inf')}
"""

# ARGV: prefix, queue, user, the notification's kind ('d' deleted, 'c' closed by its client)
_DELETE = """
if redis.call('HGET', qkey(ARGV[2]), 'user') ~= ARGV[3] then return 0 end
drop(ARGV[2], ARGV[3])
redis.call('PUBLISH', notify, ARGV[4] .. ' ' .. ARGV[2])
return 1
"""

# ARGV: prefix, queue, seq (the initial state contains the organization's events up to it)
_EXCLUDE = """
local qid, seq = ARGV[2], tonumber(ARGV[3])
local k = qkey(qid)
local uid = redis.call('HGET', k, 'user')
if not uid then return 0 end
local published = redis.call('HGETALL', k .. ':ob')
for j = 1, #published, 2 do
  if tonumber(published[j]) <= seq then
    redis.call('ZREMRANGEBYSCORE', k .. ':ev', published[j + 1], published[j + 1])
  end
end
redis.call('DEL', k .. ':ob')
local uq = p .. ':uq:' .. uid
local entry = redis.call('HGET', uq, qid)
if entry then
  local types, created, ttl = entry_fields(entry)
  redis.call('HSET', uq, qid, types .. '|' .. created .. '|' .. ttl .. '|' .. seq)
end
return 1
"""

# ARGV: prefix, batch size
_SWEEP = """
local expired = redis.call('ZRANGEBYSCORE', expiry, '-inf', now(), 'LIMIT', 0, tonumber(ARGV[2]))
local removed = {}
for _, qid in ipairs(expired) do
  local uid = redis.call('HGET', qkey(qid), 'user')
  drop(qid, uid)
  table.insert(removed, qid)
  table.insert(removed, uid or '')
end
if #expired > 0 then redis.call('PUBLISH', notify, 'd ' .. table.concat(expired, ' ')) end
return removed
"""

# ARGV: prefix, the index's TTL. Puts every queue's user in their organization's index
# (P:rq:<realm>): the queues the previous version created (their polls add them too, see
# begin_poll). Returns how many queues there are.
_INDEX_REALMS = """
local queues = redis.call('ZRANGE', expiry, 0, -1)
for _, qid in ipairs(queues) do
  local q = redis.call('HMGET', qkey(qid), 'user', 'realm')
  if q[1] and q[2] then
    redis.call('SADD', p .. ':rq:' .. q[2], q[1])
    redis.call('EXPIRE', p .. ':rq:' .. q[2], tonumber(ARGV[2]))
  end
end
return #queues
"""

SCRIPTS = {
    "create": _CREATE,
    "publish": _PUBLISH,
    "begin_poll": _BEGIN_POLL,
    "count_poll": _COUNT_POLL,
    "heartbeat": _HEARTBEAT,
    "delete": _DELETE,
    "exclude": _EXCLUDE,
    "sweep": _SWEEP,
    "index_realms": _INDEX_REALMS,
}

# Each script by its SHA1, as EVALSHA names it.
SHAS = {name: hashlib.sha1((PRELUDE + body).encode()).hexdigest() for name, body in SCRIPTS.items()}  # noqa: S324
