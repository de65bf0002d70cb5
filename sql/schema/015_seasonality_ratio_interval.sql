-- peak_to_trough itself is now the ratio of that smoothed rhythm, not of the 168 medians.
-- The seasonality ratio's 95 % interval (bootstrap over whole UTC days of the smoothed
-- rhythm, pipeline.analysis.rhythm_size). NULL: under seven days with data, where
-- resampling so few days would understate the spread.
ALTER TABLE seasonality ADD COLUMN peak_to_trough_lo DOUBLE;
ALTER TABLE seasonality ADD COLUMN peak_to_trough_hi DOUBLE;
