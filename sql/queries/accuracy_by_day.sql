-- name: accuracy_by_day
-- answers: How often were answers correct each day, per provider and task family?
SELECT provider, task_family, day, n_scored,
       round(accuracy, 3) AS accuracy, round(sanity_flag_rate, 3) AS sanity_flag_rate
FROM (
    SELECT provider, task_family, day,
           sum(n_scored) AS n_scored,
           sum(accuracy * n_scored) / nullif(sum(n_scored), 0) AS accuracy,
           sum(sanity_flag_rate * n) / sum(n) AS sanity_flag_rate
    FROM daily GROUP BY ALL
)
ORDER BY provider, task_family, day;
