-- How a puzzle run's answers drifted in training, read from its TurnGroupScored events: per agent
-- and iteration (one row each for 0-4, then 5-9, 10-19, ...: its first), the sampled candidates, their moves per
-- answer, mean reward, the share ending in a deadlock or solving, and within each group the
-- correlation of an answer's moves with its reward (negative: the group's advantages favour the
-- shorter answers) with the share of groups where it is negative and of flat groups (one reward).
-- Usage (stack up): psql postgres://tandem@127.0.0.1:5433/tandem -v run=<run id> -f bench/learning/drift.sql
with s as (
  select e.global_position as gid, data->>'agent' as agent, (data->>'iteration')::int as it,
    coalesce(substring(x->>'outcome' from '(\d+) moves?')::int, 0)::float as moves,
    (x->>'reward')::float as reward, x->>'outcome' as outcome
  from events e, jsonb_array_elements(e.data->'samples') x
  where e.type = 'TurnGroupScored' and e.data->>'runId' = :'run' and e.data->>'episodeId' ~ ('^' || :'run' || '/it[0-9]+/ep')
), g as (
  select agent, it, gid, corr(moves, reward) as c, stddev_pop(reward) as sd from s group by 1, 2, 3
), bucket as (
  select agent, case when it < 5 then it when it < 10 then 5 else it / 10 * 10 end as its, count(*) as candidates,
    round(avg(moves)::numeric, 1) as moves, round(avg(reward)::numeric, 3) as reward,
    round(100.0 * avg(case when outcome ~ 'deadlock' then 1 else 0 end), 1) as deadlock_pct,
    round(100.0 * avg(case when outcome ~ 'solved' then 1 else 0 end), 1) as solved_pct
  from s group by 1, 2
), corrs as (
  select agent, case when it < 5 then it when it < 10 then 5 else it / 10 * 10 end as its, round(avg(c)::numeric, 2) as moves_reward_corr,
    round(100.0 * avg(case when c < 0 then 1 else 0 end), 0) as negative_pct,
    round(100.0 * avg(case when sd < 1e-9 then 1 else 0 end), 0) as flat_pct
  from g group by 1, 2
)
select * from bucket join corrs using (agent, its) order by agent, its;
